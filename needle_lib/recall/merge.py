"""Merge recall dump parts (``--shard-by case`` runs on several machines) into one dump.

The merged dump is what one machine would have written: the parts' shared header, every
case once in dump order, and the summary recomputed from the cases. Parts from different
setups are refused with the differing fields named, because a number mixing two setups
describes neither; a case present in two parts is refused too (which copy counts?). Cases
missing from the merge are reported and leave the dump incomplete, so ``--resume`` on the
merged dump asks for exactly them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needle_lib.contract.schema import SchemaError, validate_recall_dump
from needle_lib.contract.setup import RUN_STATE, refusal, setup_differences
from needle_lib.errors import UsageError
from needle_lib.recall.results import finalize, new_dump


class MergeError(UsageError, ValueError):
    """Parts that cannot make one dump; the message names the files and the difference."""


@dataclass(frozen=True)
class Part:
    path: Path
    dump: dict[str, Any]


@dataclass
class Merged:
    dump: dict[str, Any]
    #: What is missing from the merge, one line each; empty when the parts cover the run.
    missing: list[str] = field(default_factory=list)
    #: One line saying what the merged dump holds (cases of expected).
    summary: str = ""
    #: The command that completes an incomplete merge, if there is one.
    resume_hint: str | None = None


def check_setups(parts: list[Part], headers: list[dict[str, Any]]) -> None:
    """Refuse parts whose headers differ in setup, naming every differing leaf."""
    first, first_header = parts[0], headers[0]
    for part, header in zip(parts[1:], headers[1:], strict=True):
        diffs = setup_differences(first_header, header)
        if diffs:
            raise MergeError(refusal(f"{part.path} comes from a different setup than "
                                     f"{first.path}; refusing to mix", diffs,
                                     (first.path.name, part.path.name)))


def _check_shards(parts: list[Part]) -> list[str]:
    """Refuse parts of different splits or a shard given twice; name missing shards and
    cases a shard was given but did not record (a killed or fail-fast machine)."""
    shards = [(part, part.dump["shard"]) for part in parts if part.dump.get("shard")]
    if not shards:
        return []
    splits = {(s["count"], s["by"]) for _, s in shards}
    if len(splits) > 1:
        raise MergeError("parts come from different --shard splits: " + ", ".join(
            f"{p.path.name} is {s['index']}/{s['count']} by {s['by']}" for p, s in shards))
    count = shards[0][1]["count"]
    seen: dict[int, Path] = {}
    missing = []
    for part, shard in shards:
        if shard["index"] in seen:
            raise MergeError(f"shard {shard['index']}/{count} given twice: "
                             f"{seen[shard['index']]} and {part.path}")
        seen[shard["index"]] = part.path
        recorded = {c["case_id"] for c in part.dump["cases"]}
        lost = [case_id for case_id in shard["case_ids"] if case_id not in recorded]
        if lost:
            missing.append(f"{part.path.name} (shard {shard['index']}/{count}) lacks "
                           f"{len(lost)} of its cases: {', '.join(lost)}")
    missing += [f"shard {index}/{count}: no part given"
                for index in range(1, count + 1) if index not in seen]
    return missing


def _check_duplicates(parts: list[Part]) -> None:
    owner: dict[str, Path] = {}
    twice: dict[str, list[Path]] = {}
    for part in parts:
        for case in part.dump["cases"]:
            case_id = case["case_id"]
            if case_id in owner:
                twice.setdefault(case_id, [owner[case_id]]).append(part.path)
            else:
                owner[case_id] = part.path
    if twice:
        raise MergeError(f"{len(twice)} case(s) appear in more than one part (overlapping "
                         "shards?): " + "; ".join(
                             f"{case_id} in {', '.join(str(p) for p in paths)}"
                             for case_id, paths in sorted(twice.items())))


def merge_recall(parts: list[Part]) -> Merged:
    """One dump from ``parts`` of one (corpus, model) run; MergeError when they cannot be."""
    for part in parts:
        try:
            validate_recall_dump(part.path, part.dump)
        except SchemaError as exc:
            raise MergeError(str(exc)) from None
    check_setups(parts, [part.dump for part in parts])
    missing = _check_shards(parts)
    _check_duplicates(parts)
    dump = new_dump({k: v for k, v in parts[0].dump.items() if k not in RUN_STATE})
    dump["cases"] = sorted((case for part in parts for case in part.dump["cases"]),
                           key=lambda c: (c["start_line"], c["case_id"]))
    finalize(dump, in_progress=False)
    summary = dump["summary"]
    if summary["not_run"] and not missing:
        missing.append(f"{summary['not_run']} of {summary['expected']} expected cases are in "
                       "no part")
    hint = (f"uv run pytest evals --corpus {shlex.quote(dump['corpus']['name'])} --model "
            f"{shlex.quote(dump['model']['key'])} --dump OUT --resume")
    return Merged(dump, missing, f"{summary['cases']} of {summary['expected']} cases", hint)
