"""Controller-side recall dumps: merge case records, rewrite the dump after every case."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from needle_lib.contract.outcome import Outcome, is_answered
from needle_lib.contract.records import CaseRecord
from needle_lib.jsonio import read_json, write_json_atomic
from needle_lib.recall.results import finalize, new_dump


class RecallDumps:
    """One dump per (corpus, model), owned by the controller process only."""

    def __init__(self, path_for: Callable[[str], Path], resume: bool) -> None:
        self.path_for = path_for
        self.resume = resume
        self.dumps: dict[str, dict[str, Any]] = {}
        self.paths: dict[str, Path] = {}

    def _open(self, record: CaseRecord) -> dict[str, Any]:
        pair = record["pair"]
        if pair in self.dumps:
            return self.dumps[pair]
        path = self.path_for(pair)
        dump = new_dump(record["header"])
        if self.resume and path.is_file():
            previous = read_json(path)
            # The setup was checked at session start; keep the cases that were answered.
            kept = [c for c in previous.get("cases", []) if is_answered(c)]
            dump["cases"] = kept
            dump["resumed_from"] = {"cases_kept": len(kept)}
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
        write_json_atomic(self.paths[record["pair"]], finalize(dump, in_progress=True))

    def finish(self) -> list[dict[str, Any]]:
        for pair, dump in self.dumps.items():
            write_json_atomic(self.paths[pair], finalize(dump, in_progress=False), indent=1)
        return list(self.dumps.values())
