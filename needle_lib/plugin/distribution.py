"""How xdist spreads cases over workers, when Needle needs a say in it.

xdist turns ``-n`` into ``--dist load`` (any case to any worker). Two kinds of run need
groups kept on one worker instead, via ``--dist loadgroup`` and the ``xdist_group`` marks
on every case: search runs (one request at a time per engine, for comparable latency) and
recall runs with ``concurrency`` above 1 (a worker can only send ahead the cases it will
run itself, so a (corpus, model) pair must stay on one worker).
"""

from __future__ import annotations

import pytest

#: Modes that may hand a pair's cases to several workers.
SCATTERING = ("load", "worksteal")


def explicit_dist(config: pytest.Config) -> bool:
    """Whether the user chose ``--dist`` on the command line (xdist fills in ``load``)."""
    return any(a == "--dist" or a.startswith("--dist=") or a == "-d"
               for a in config.invocation_params.args)


def default_to_loadgroup(config: pytest.Config) -> None:
    """``--dist loadgroup`` unless the user chose a mode. Call before the session starts:
    xdist picks its scheduler, and ships options to workers, from this value."""
    if not explicit_dist(config) and getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"


def require_grouping(config: pytest.Config, why: str) -> None:
    """Refuse an explicit mode that scatters groups; otherwise default to loadgroup."""
    dist = getattr(config.option, "dist", "no")
    if explicit_dist(config) and dist in SCATTERING:
        raise pytest.UsageError(f"--dist {dist} cannot be used with {why}: it may split a "
                                "(corpus, model) pair over workers; use --dist loadgroup "
                                "(the default) or drop --dist")
    default_to_loadgroup(config)


DIST_KEY = "needle_dist"


def share_dist(node) -> None:
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


def keep_group_suffixes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a loadgroup worker: make the ``@group`` suffix xdist gave a node id take effect.

    xdist (3.8) marks a case's group by rewriting ``item._nodeid``; pytest 9.2 reads node
    ids from the structured ``item._id`` instead, so the suffix is lost and loadgroup
    silently scatters every group (pytest-xdist#1386). Call after xdist's own hook.
    """
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    from _pytest.nodeid import NodeId  # pytest ≥ 9.2 only, where the suffix is lost

    for item in items:
        legacy = getattr(item, "_nodeid", None)
        if isinstance(legacy, str) and legacy != item.nodeid:
            item._id = NodeId.parse(legacy)
