"""A search run's report, scored while the run goes on: a query as soon as its engines are in.

Pooled figures need every engine's answer to a query, not every query's: once the last engine
of a query has answered, the query is scored into the bench's report fold and its rows and
cases are spooled as JSON text (``benches.tables``). At the run's end only the queries still
open are scored, and the report is written by copying text. The end of a 20,000-case run
used to read its journal back, score it and encode every row again: seconds, and the run's
peak memory.

The journal stays the record of the run (a killed run is resumed and re-read from it). A
case for a query already scored (a case run twice) makes the report come from the journal
instead, as ``runfiles.SearchJournal.finish`` builds it: the later case wins there, as always.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from needle_lib.benches.registry import report_fold
from needle_lib.benches.runfiles import CaseTally, SearchJournal
from needle_lib.benches.tables import SpooledRows, SpooledTables
from needle_lib.contract.records import BenchCaseRecord
from needle_lib.contract.report import SearchReport, report_fields, summary_of
from needle_lib.jsonio import write_json_by_line_atomic
from needle_lib.judge.identity import SeenJudges
from needle_lib.kernel.journal import journal_path


class LiveReport:
    """One run's journal and its report in the making (one writer: the controller)."""

    def __init__(self, report_path: Path, header: dict[str, Any]) -> None:
        #: a copy, held by the fold too: the judges the cases saw join it at the end
        self.header = dict(header)
        self.journal = SearchJournal(journal_path(report_path), header)
        self._engines = frozenset(header["engines"])
        self._tables = SpooledTables()
        self._fold = report_fold(self.header, self._tables)
        self._cases = SpooledRows()
        self._tally = CaseTally()
        self._judges = SeenJudges()
        #: cases of queries some engine has not answered yet, by query, then engine, each
        #: with its JSON text (as journaled)
        self._open: dict[str, dict[str, tuple[BenchCaseRecord, str]]] = {}
        self._scored: set[str] = set()
        self._from_journal = False

    def append(self, case: BenchCaseRecord) -> None:
        text = json.dumps(case, ensure_ascii=False)  # once, for the journal and the report
        self.journal.append_encoded(text)
        if self._from_journal:
            return
        query_id = case["query_id"]
        if query_id in self._scored:
            self._from_journal = True
            self._open.clear()
            self._close_spools()
            return
        present = self._open.setdefault(query_id, {})
        present[case["engine"]] = (case, text)
        if self._engines <= present.keys():
            self._score(query_id)

    def _score(self, query_id: str) -> None:
        present = self._open.pop(query_id)
        self._fold.add_query({engine: case for engine, (case, _) in present.items()})
        for case, text in present.values():
            self._tally.add(case)
            self._judges.add(case)
            self._cases.append_encoded(text)
        self._scored.add(query_id)

    def finish(self, report_path: Path, *, complete_run: bool) -> SearchReport:
        """Write the report; its summary (the report without per-query rows and cases)."""
        if self._from_journal:
            return summary_of(self.journal.finish(report_path, complete_run=complete_run))
        for query_id in list(self._open):  # in first-appearance order
            self._score(query_id)
        self.header.update(self._judges.stamp(self.header))  # as ``assemble_report`` does
        report = self._fold.report(in_progress=False)
        self._tally.stamp(report, complete_run=complete_run)
        report.cases = self._cases
        try:
            write_json_by_line_atomic(report_path, report_fields(report))
        finally:
            self._close_spools()
        # held (and locked, ``kernel.journal``) until the report is written
        self.journal.close(remove=True)
        return summary_of(report)

    def abandon(self) -> None:
        """Close the journal as it stands and write no report (a full disk): the run reads
        back like a killed one, and ``--resume`` continues from its journal."""
        self.journal.abandon()
        self._close_spools()

    def _close_spools(self) -> None:
        self._tables.close()
        self._cases.close()
