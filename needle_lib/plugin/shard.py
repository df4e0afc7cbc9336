"""How a run's cases are spread: over machines (``--shard I/N``) and over xdist workers
(``--dist``).

``--shard I/N``: one deterministic share of the collected cases, for N machines. Every
machine runs the same command on the same checkout, so it collects the same cases and can
work out its share alone, with no coordinator. By default whole (corpus, model) pairs stay
together: each pair's dump is then complete on one machine, and its server is asked in one
order. ``--shard-by case`` splits pairs too (one big pair over many machines); each shard
then writes a dump part under ``<results>/parts/``, which ``needle merge`` joins. Search
cases are split by query (a query's engines stay on one machine, so they answer it at the
same moment); each shard writes its own run report and ``needle merge`` recomputes the
pooled figures over all of them.

xdist turns ``-n`` into ``--dist load`` (any case to any worker). Two kinds of run need
groups kept on one worker instead, via ``--dist loadgroup`` and the ``xdist_group`` marks
on every case: search runs (one request at a time per engine, for comparable latency) and
recall runs with ``concurrency`` above 1 (a worker can only send ahead the cases it will
run itself, so a (corpus, model) pair must stay on one worker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from needle_lib.contract.records import ShardRecord
from needle_lib.plugin.collect import case_of, recall_plan, runs_recall
from needle_lib.plugin.settings import WorkerNode, settings
from needle_lib.recall.plan import RecallCase

if TYPE_CHECKING:
    from needle_lib.benches.plan import SearchCase

#: Modes that may hand a pair's cases to several workers.
SCATTERING = ("load", "worksteal")
DIST_KEY = "needle_dist"

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


def select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this shard's cases (and every other item); deselect the rest."""
    run = settings(config)
    shard = run.shard
    if shard is None:
        return
    by_case = run.shard_by == "case"
    cases = {item.nodeid: case for item in items if (case := case_of(item)) is not None}

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


def part_shard(config: pytest.Config, pair: str) -> ShardRecord | None:
    """The dump-header ``shard`` of a part (``--shard-by case``): which shard wrote it and
    which cases it was given, so ``needle merge`` can name what is missing."""
    run = settings(config)
    if run.shard is None or not run.writes_parts:
        return None
    return ShardRecord(index=run.shard.index, count=run.shard.count, by="case",
                       case_ids=config.stash.get(_assigned_key, {}).get(pair, []))


def explicit_dist(config: pytest.Config) -> bool:
    """Whether the user chose ``--dist`` on the command line (xdist fills in ``load``)."""
    return any(a == "--dist" or a.startswith("--dist=") or a == "-d"
               for a in config.invocation_params.args)


def default_to_loadgroup(config: pytest.Config) -> None:
    """``--dist loadgroup`` unless the user chose a mode. Call before the session starts:
    xdist picks its scheduler, and ships options to workers, from this value."""
    if not explicit_dist(config) and getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"


def default_dist_for_search(config: pytest.Config) -> None:
    """Search runs under xdist default to ``--dist loadgroup`` (one request at a time per
    engine, for comparable latency), unless the user chose a mode."""
    if settings(config).has_query_set:
        default_to_loadgroup(config)


def check_grouping(config: pytest.Config) -> None:
    """At session start: a recall model with ``concurrency`` above 1 under xdist needs its
    pairs kept on one worker each."""
    if not runs_recall(config) or getattr(config.option, "dist", "no") == "no":
        return
    concurrent = [m.key for m in recall_plan(config).models if m.concurrency > 1]
    if concurrent:
        require_grouping(config, f"concurrency > 1 (model {concurrent[0]})")


def require_grouping(config: pytest.Config, why: str) -> None:
    """Refuse an explicit mode that scatters groups; otherwise default to loadgroup."""
    dist = getattr(config.option, "dist", "no")
    if explicit_dist(config) and dist in SCATTERING:
        raise pytest.UsageError(f"--dist {dist} cannot be used with {why}: it may split a "
                                "(corpus, model) pair over workers; use --dist loadgroup "
                                "(the default) or drop --dist")
    default_to_loadgroup(config)


def share_dist(node: WorkerNode) -> None:
    """xdist: tell a worker the mode the controller schedules with. Workers parse the
    command line themselves, so a mode chosen here (``default_to_loadgroup``) never reaches
    them otherwise; and a worker adds the group to its node ids (which loadgroup schedules
    by) only when it knows the mode is loadgroup."""
    node.workerinput[DIST_KEY] = getattr(node.config.option, "dist", "no")


def adopt_dist(config: pytest.Config) -> None:
    """On a worker: group node ids when the controller schedules by group."""
    if run_dist(config) == "loadgroup":
        config.option.loadgroup = True


def run_dist(config: pytest.Config) -> str:
    """The run's ``--dist`` mode, as the controller schedules it (``no`` without xdist)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return str(workerinput.get(DIST_KEY, "no"))
    return str(getattr(config.option, "dist", "no"))
