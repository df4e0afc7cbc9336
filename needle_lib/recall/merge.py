"""Merge recall dump parts (``--shard-by case`` runs on several machines) into one dump.

The checks every merge makes live in ``kernel.merge``; what is recall's is the fold: the
merged dump is what one machine would have written, the parts' shared header, every case
once in dump order, and the summary recomputed from the cases. Cases missing from the merge
are reported and leave the dump incomplete, so ``--resume`` on the merged dump asks for
exactly them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any, cast

from needle_lib.contract.records import RecallCaseRecord
from needle_lib.contract.schema import SchemaError, validate_recall_dump
from needle_lib.contract.setup import RUN_STATE
from needle_lib.kernel.merge import Merged, MergeError, Part, merge
from needle_lib.recall.results import finalize, new_dump


class RecallMerge:
    """Recall's ``kernel.merge.MergeFamily``: a part is a dump, its header the dump."""

    def header(self, part: Part) -> Mapping[str, Any]:
        try:
            validate_recall_dump(part.path, part.dump)
        except SchemaError as exc:
            raise MergeError(str(exc)) from None
        return part.dump

    def shard(self, part: Part) -> Mapping[str, Any] | None:
        shard: Mapping[str, Any] | None = part.dump.get("shard")
        return shard

    def cases(self, part: Part) -> list[RecallCaseRecord]:
        return cast("list[RecallCaseRecord]", part.dump["cases"])  # validated by header()

    def key(self, case: RecallCaseRecord) -> str:
        return case["case_id"]

    def describe(self, key: str) -> str:
        return key

    def fold(self, parts: list[Part], headers: list[Mapping[str, Any]],
             missing: list[str]) -> Merged:
        dump = new_dump({k: v for k, v in parts[0].dump.items() if k not in RUN_STATE})
        dump["cases"] = sorted((case for part in parts for case in part.dump["cases"]),
                               key=lambda c: (c["start_line"], c["case_id"]))
        finalize(dump, in_progress=False)
        summary = dump["summary"]
        if summary["not_run"] and not missing:
            missing.append(f"{summary['not_run']} of {summary['expected']} expected cases "
                           "are in no part")
        hint = (f"uv run pytest evals --corpus {shlex.quote(dump['corpus']['name'])} --model "
                f"{shlex.quote(dump['model']['key'])} --dump OUT --resume")
        return Merged(dump, missing, f"{summary['cases']} of {summary['expected']} cases",
                      hint)


def merge_recall(parts: list[Part]) -> Merged:
    """One dump from ``parts`` of one (corpus, model) run; MergeError when they cannot be."""
    return merge(parts, RecallMerge())
