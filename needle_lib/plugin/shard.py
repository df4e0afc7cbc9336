"""``--shard I/N``: one deterministic share of the collected cases, for N machines.

Every machine runs the same command on the same checkout, so it collects the same cases and
can work out its share alone, with no coordinator. By default whole (corpus, model) pairs
stay together: each pair's dump is then complete on one machine, and its server is asked in
one order. ``--shard-by case`` splits pairs too (one big pair over many machines); each
shard then writes a dump part under ``<results>/parts/``, which ``needle merge`` joins.

Search cases are split by query (a query's engines stay on one machine, so they answer it
at the same moment); each shard writes its own run report and ``needle merge`` recomputes
the pooled figures over all of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from needle_lib.argtypes import Shard
from needle_lib.plugin.recall.plan import RecallCase, recall_case_of

if TYPE_CHECKING:
    from needle_lib.plugin.search.plan import SearchCase

PARTS_DIR = "parts"

_assigned_key = pytest.StashKey[dict[str, list[str]]]()


def assign(sizes: dict[str, int], count: int) -> dict[str, int]:
    """Group → shard (1-based): largest groups first, each to the shard holding the fewest
    cases so far (ties: lowest shard, then group name), so shards take similar time and
    every machine computes the same answer."""
    load = [0] * count
    shard_of = {}
    for group in sorted(sizes, key=lambda g: (-sizes[g], g)):
        target = min(range(count), key=lambda i: (load[i], i))
        shard_of[group] = target + 1
        load[target] += sizes[group]
    return shard_of


def _case_of(item: pytest.Item) -> RecallCase | SearchCase | None:
    recall = recall_case_of(item)
    if recall is not None:
        return recall
    callspec = getattr(item, "callspec", None)
    # a search case, or None for a bench's placeholder (never kept)
    search: SearchCase | None = callspec.params.get("search_case") if callspec else None
    return search


def select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this shard's cases (and every other item); deselect the rest."""
    shard: Shard | None = config.getoption("shard")
    if shard is None:
        return
    by_case = config.getoption("shard_by") == "case"
    cases = {item.nodeid: case for item in items if (case := _case_of(item)) is not None}

    def group(case: RecallCase | SearchCase) -> str:
        if isinstance(case, RecallCase):
            return case.id if by_case else case.pair
        return f"search:{case.bench}:{case.query.query_id}"

    sizes: dict[str, int] = {}
    for case in cases.values():
        sizes[group(case)] = sizes.get(group(case), 0) + 1
    shard_of = assign(sizes, shard.count)
    kept, deselected = [], []
    assigned: dict[str, list[str]] = {}
    for item in items:
        case = cases.get(item.nodeid)
        if case is not None and shard_of[group(case)] != shard.index:
            deselected.append(item)
            continue
        kept.append(item)
        if isinstance(case, RecallCase):
            assigned.setdefault(case.pair, []).append(case.target.case_id)
    config.stash[_assigned_key] = assigned
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def part_fields(config: pytest.Config, pair: str) -> dict[str, Any]:
    """Dump-header fields of a part (``--shard-by case``): which shard wrote it and which
    cases it was given, so ``needle merge`` can name what is missing."""
    shard: Shard | None = config.getoption("shard")
    if shard is None or config.getoption("shard_by") != "case":
        return {}
    return {
        "shard": {
            "index": shard.index,
            "count": shard.count,
            "by": "case",
            "case_ids": config.stash.get(_assigned_key, {}).get(pair, []),
        }
    }


def part_path(results: Path, pair: str, shard: Shard) -> Path:
    return results / PARTS_DIR / f"{pair}.shard-{shard.index}-of-{shard.count}.json"


def writes_parts(config: pytest.Config) -> bool:
    return config.getoption("shard") is not None and config.getoption("shard_by") == "case"
