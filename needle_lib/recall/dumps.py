"""Controller-side recall dumps: merge case records, rewrite the dump after every case.

Each run's dump goes to a new file of the result store (``needle_lib.recall.store``), or to
the one file the command line names (``--dump``, a shard part).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord
from needle_lib.recall.results import finalize, new_dump
from needle_lib.recall.store import ResultStore, write_dump

#: pair → (the dump resumed from, its scored cases), or None when nothing is resumed.
Resumed = Callable[[str], "tuple[Path, list[dict[str, Any]]] | None"]


class RecallDumps:
    """One dump per (corpus, model), owned by the controller process only."""

    def __init__(
        self, fixed_path: Callable[[str], Path | None], store: ResultStore, resumed: Resumed
    ) -> None:
        self.fixed_path = fixed_path
        self.store = store
        self.resumed = resumed
        self.dumps: dict[str, dict[str, Any]] = {}
        self.paths: dict[str, Path] = {}
        self._stored: set[str] = set()

    def _open(self, record: CaseRecord) -> dict[str, Any]:
        pair = record["pair"]
        if pair in self.dumps:
            return self.dumps[pair]
        path = self.fixed_path(pair)
        if path is None:
            path = self.store.new_run(pair)
            self._stored.add(pair)
        dump = new_dump(record["header"])
        previous = self.resumed(pair)
        if previous is not None:
            # The setup was checked at session start; keep the cases that were answered.
            source, kept = previous
            dump["cases"] = list(kept)
            dump["resumed_from"] = {"dump": str(source), "cases_kept": len(kept)}
        self.dumps[pair] = dump
        self.paths[pair] = path
        return dump

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        dump = self._open(record)
        case = dict(record["case"])
        case["outcome"] = outcome
        cases = [c for c in dump["cases"] if c["case_id"] != case["case_id"]]
        cases.append(case)
        cases.sort(key=lambda c: (c["start_line"], c["case_id"]))
        dump["cases"] = cases
        self._write(record["pair"], finalize(dump, in_progress=True))

    def finish(self) -> list[dict[str, Any]]:
        for pair, dump in self.dumps.items():
            self._write(pair, finalize(dump, in_progress=False))
        return list(self.dumps.values())

    def _write(self, pair: str, dump: dict[str, Any]) -> None:
        if pair in self._stored:
            self.store.save(pair, self.paths[pair], dump)
        else:
            write_dump(self.paths[pair], dump)
