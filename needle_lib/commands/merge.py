"""`needle merge PART… --out DUMP`: join the dumps of one run split over machines.

Parts are merged by kind, each kind by its own merger, because what "merging" means
differs: recall parts are unions of independent cases, while a search report's pooled
metrics (nDCG's ideal ranking, overlap) must be recomputed over every engine's results,
never averaged. A kind without a merger is refused with a clear message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from needle_lib.benches.merge import merge_search, read_search_part
from needle_lib.contract.schema import SchemaError
from needle_lib.jsonio import write_json_atomic
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_kind
from needle_lib.kernel.merge import Merged, MergeError, Part
from needle_lib.recall.journal import fold_journal, read_dump
from needle_lib.recall.merge import merge_recall

Merger = Callable[[list[Part]], Merged]

#: Dump kind → merger.
MERGERS: dict[str, Merger] = {"recall": merge_recall, "search": merge_search}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "merge", help="merge dump parts of one run (--shard-by case) or search reports "
                      "(split by queries or engines), or a killed run's .partial.jsonl, "
                      "into one")
    parser.add_argument("parts", type=Path, nargs="+", metavar="PART",
                        help="dump parts, e.g. results/parts/jquery__m.shard-*.json")
    parser.add_argument("--out", type=Path, required=True, metavar="DUMP",
                        help="where the merged dump goes (e.g. results/jquery__m.json)")
    parser.set_defaults(func=run)


def kind_of(dump: Any) -> str:
    """``recall`` for recall dumps, ``search`` for search run reports."""
    if not isinstance(dump, dict):
        return "unknown"
    if dump.get("benchmark") == "recall":
        return "recall"
    return "search" if "engines" in dump else "unknown"


def _read(path: Path) -> Part:
    """A part by what the file holds; a journal (an interrupted run's case log) by the kind
    its header line says."""
    try:
        if path.name.endswith(JOURNAL_SUFFIX):
            if journal_kind(path) == "search":
                return read_search_part(path)
            return Part(path, dict(fold_journal(path, in_progress=True)))  # either family's
        return Part(path, read_dump(path))
    except SchemaError as exc:
        raise MergeError(str(exc)) from None


def merge_parts(paths: list[Path]) -> Merged:
    parts = [_read(path) for path in paths]
    kinds = {kind_of(part.dump) for part in parts}
    if len(kinds) > 1:
        raise MergeError("parts of different kinds: " + ", ".join(
            f"{part.path.name} is {kind_of(part.dump)}" for part in parts))
    (kind,) = kinds
    if kind in MERGERS:
        return MERGERS[kind](parts)
    raise MergeError(f"{parts[0].path}: not a Needle recall dump or search report")


def run(args: argparse.Namespace) -> int:
    try:
        merged = merge_parts(args.parts)
    except MergeError as exc:
        print(f"needle merge: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(args.out, merged.dump, indent=1)
    print(f"merged {len(args.parts)} part(s) → {args.out}: {merged.summary}")
    for line in merged.missing:
        print(f"needle merge: missing: {line}", file=sys.stderr)
    if merged.missing:
        hint = (merged.resume_hint or "").replace("OUT", str(args.out))
        print("needle merge: the merged dump is incomplete" +
              (f"; ask for the missing cases with: {hint}" if hint else ""), file=sys.stderr)
        return 1
    return 0
