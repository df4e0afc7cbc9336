"""Controller-side recall dumps: a journal line per case, the dump as its fold.

Each run's dump goes to a new file of the result store (``needle_lib.recall.store``), or to
the one file the command line names (``--dump``, a shard part); its journal goes beside it
(``recall.journal``). The controller keeps no case in memory while the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord, RecallCaseRecord, RecallDump, RecallHeader
from needle_lib.kernel.journal import Journal, journal_path
from needle_lib.recall.journal import RESUMED_FROM, fold, fold_journal
from needle_lib.recall.store import ResultStore, write_dump

#: pair → (the dump resumed from, its scored cases), or None when nothing is resumed.
Resumed = Callable[[str], "tuple[Path, list[dict[str, Any]]] | None"]


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
        kept: list[dict[str, Any]] = []
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
        # TODO(merge): plugin.resume keeps its cases as plain dicts
        self._write(pair, fold(header, cast(list[RecallCaseRecord], kept), in_progress=True))
        return journal

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        self._open(record).append({**record["case"], "outcome": outcome})

    def finish(self, *, interrupted: bool = False) -> list[RecallDump]:
        """Write every dump as the fold of its journal, then remove the journal. An
        interrupted run's dump says so by itself: its cases not run make it incomplete."""
        finished = []
        for pair, journal in self.journals.items():
            journal.close(remove=False)
            dump = fold_journal(journal.path, in_progress=False)
            self._write(pair, dump)
            journal.path.unlink(missing_ok=True)
            finished.append(dump)
        return finished

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
