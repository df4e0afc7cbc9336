"""Controller-side recall dumps: a journal line per case, the dump as its fold.

Each run's dump goes to a new file of the result store (``needle_lib.recall.store``), or to
the one file the command line names (``--dump``, a shard part); its journal goes beside it
(``recall.journal``). The controller keeps no case in memory while the run goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord, RecallCaseRecord, RecallDump, RecallHeader
from needle_lib.contract.schema import SchemaError, read_json_file
from needle_lib.kernel.journal import Journal, journal_path
from needle_lib.recall.journal import RESUMED_FROM, fold, fold_journal, settle_abandoned
from needle_lib.recall.store import STORED_AS, ResultStore, write_dump

#: pair → (the dump resumed from, its scored cases), or None when nothing is resumed.
Resumed = Callable[[str], "tuple[Path, list[RecallCaseRecord]] | None"]


class RecallDumps:
    """One dump per (corpus, model), owned by the controller process only: recall's
    ``kernel.benchmark.RunWriter``."""

    def __init__(
        self, fixed_path: Callable[[str], Path | None], store: ResultStore, resumed: Resumed
    ) -> None:
        self.fixed_path = fixed_path
        self.store = store
        self.resumed = resumed
        self.journals: dict[str, Journal] = {}
        self.paths: dict[str, Path] = {}
        self._stored: set[str] = set()

    def _open(self, record: CaseRecord) -> Journal:
        pair = record["pair"]
        if pair in self.journals:
            return self.journals[pair]
        path = self.fixed_path(pair)
        if path is None:
            path = self.store.new_run(pair)
            self._stored.add(pair)
        # a recall record's header is its plan's (``RecallPlan.header``): CaseRecord holds
        # either family's
        header = cast(RecallHeader, dict(record["header"]))
        previous = self.resumed(pair)
        kept: list[RecallCaseRecord] = []
        if previous is not None:
            # The setup was checked at session start; keep the cases that were answered.
            source, kept = previous
            header[RESUMED_FROM] = {"dump": str(source), "cases_kept": len(kept)}
        journal = Journal(journal_path(path), header)
        for case in kept:
            journal.append(case)
        self.journals[pair] = journal
        self.paths[pair] = path
        # the dump as the run starts, so the latest view and `needle status` find the run
        self._write(pair, fold(header, [case.copy() for case in kept], in_progress=True))
        return journal

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        self._open(record).append({**record["case"], "outcome": outcome})

    def finish(self, *, interrupted: bool = False) -> list[RecallDump]:
        """Write every dump as the fold of its journal, then remove the journal. An
        interrupted run's dump says so by itself: its cases not run make it incomplete.
        The journal stays open (its lock held) until the dump is written: another run
        settling abandoned journals must never take this one for a killed run's."""
        finished = []
        for pair, journal in self.journals.items():
            dump = fold_journal(journal.path, in_progress=False)  # every line is flushed
            self._write(pair, dump)
            journal.close(remove=True)
            finished.append(dump)
            if not interrupted and pair in self._stored:
                self._settle_earlier(pair)
        return finished

    def _settle_earlier(self, pair: str) -> None:
        """Settle the journals killed runs of ``pair`` left (``recall.journal``), except
        that of a run the latest view is a copy of (the copy reads its cases from it)."""
        view = self.store.latest_path(pair)
        copied = None
        if view.is_file() and not view.is_symlink():
            with contextlib.suppress(SchemaError):
                data = read_json_file(view)
                if isinstance(data, dict) and isinstance(data.get(STORED_AS), str):
                    copied = (view.parent / data[STORED_AS]).resolve()
        for run in self.store.runs(pair):
            if run != self.paths[pair] and run.resolve() != copied:
                settle_abandoned(run)

    def abandon(self) -> None:
        """Stop writing (a full disk): every journal is closed as it stands and no dump is
        written; each reads back like a killed run's, for ``--resume``."""
        for journal in self.journals.values():
            journal.abandon()

    def _write(self, pair: str, dump: RecallDump) -> None:
        if pair in self._stored:
            self.store.save(pair, self.paths[pair], dump)
        else:
            write_dump(self.paths[pair], dump)
