"""Search run files: a journal while the run is in flight, a report when it is done.

A run appends one line per case to its journal, ``<report>.partial.jsonl``
(``kernel.journal``): constant work per case however long the run, and a ``kill -9`` loses
at most the case in flight.
Pooled figures (nDCG's ideal ranking, ``ultimate``, overlap, system-specific misses) need
every engine's answers to a query: a run in flight scores each query once its engines are in
(``live_report``), and a run read back (``read_run``) from its journal or its report is
scored again from its cases. A report keeps its raw ``cases`` for exactly that reason:
reports can be merged and rebuilt, never averaged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needle_lib.benches.registry import build_report
from needle_lib.contract.outcome import is_scored, is_skipped
from needle_lib.contract.records import BenchCaseRecord, SearchCaseRecord
from needle_lib.contract.report import SearchReport, report_fields
from needle_lib.contract.schema import SearchRun, read_search_journal, read_search_report
from needle_lib.jsonio import write_json_by_line_atomic
from needle_lib.judge.identity import with_judge_seen
from needle_lib.kernel.journal import JOURNAL_SUFFIX, Journal, journal_path
from needle_lib.tomlconf import ConfigError


def reserve_run_path(path: Path) -> Path:
    """``path``, or ``<stem>-2``, ``-3``, … beside it: the first name no other run holds.

    Two runs started in the same second would otherwise share a report name and one would
    overwrite the other. A name is held by its report or by its journal, which is created
    exclusively here (and kept until the report is written), so two processes never win
    the same name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for number in range(1, 10_000):
        candidate = path if number == 1 else path.with_name(f"{path.stem}-{number}{path.suffix}")
        if candidate.exists():
            continue
        try:
            journal_path(candidate).open("x").close()
        except FileExistsError:
            continue
        return candidate
    raise ConfigError(f"{path.parent}: no free report name for {path.name}")


class SearchJournal(Journal):
    """A search run's journal, which its end turns into the run's report."""

    def finish(self, report_path: Path, *, complete_run: bool) -> SearchReport:
        """Close the journal and turn it into the run's report, read back line by line: the
        controller keeps no case in memory while the run goes on (a 20,000-case run held
        every record twice over). The journal goes only once the report is written."""
        header, cases = read_search_journal(self.path)
        report = finish_run(report_path, header, cases, complete_run=complete_run)
        self.close(remove=True)
        return report


@dataclass
class CaseTally:
    """What a report says of its cases as a whole."""

    cases: int = 0
    skipped: bool = False
    #: cases with a verdict (passed or failed): 0 means the run evaluated nothing
    scored: int = 0

    def add(self, case: SearchCaseRecord) -> None:
        self.cases += 1
        self.skipped |= is_skipped(case.get("outcome"))
        self.scored += is_scored(case.get("outcome"))

    @classmethod
    def of(cls, cases: Iterable[SearchCaseRecord]) -> CaseTally:
        tally = cls()
        for case in cases:
            tally.add(case)
        return tally

    def complete(self, expected: int, *, finished: bool) -> bool:
        """A finished run in which every expected case was asked and answered: a skipped
        case (an engine without its key, fail-fast) was never asked."""
        return finished and self.cases >= expected and not self.skipped

    def stamp(self, report: SearchReport, *, complete_run: bool) -> None:
        """The report's ``complete`` and ``scored_cases``."""
        report.complete = self.complete(report.header.get("expected_cases", 0),
                                        finished=complete_run)
        report.scored_cases = self.scored


def assemble_report(header: dict[str, Any], cases: list[BenchCaseRecord], *,
                    complete_run: bool = True) -> SearchReport:
    """The report of a run (pooled metrics computed here, once) with its header and cases;
    the header's judge block names what the cases' judge calls saw (``judge.identity``)."""
    header = with_judge_seen(header, cases)
    report = build_report(header, cases, in_progress=False)
    CaseTally.of(cases).stamp(report, complete_run=complete_run)
    report.cases = cases
    return report


def finish_run(report_path: Path, header: dict[str, Any], cases: list[BenchCaseRecord], *,
               complete_run: bool = True) -> SearchReport:
    """Build the report and write it atomically (a line per case)."""
    report = assemble_report(header, cases, complete_run=complete_run)
    write_json_by_line_atomic(report_path, report_fields(report))
    return report


def read_run(path: Path) -> SearchRun:
    """(header, cases) of a run from its report or its journal, validated against the
    schema (``contract.schema``); later lines of the same (query, engine) win, as in the run
    itself. A file that does not validate is one ``SchemaError`` (a ``ConfigError``) naming
    the file (and line) and the field."""
    if path.name.endswith(JOURNAL_SUFFIX):
        return read_search_journal(path)
    return read_search_report(path)
