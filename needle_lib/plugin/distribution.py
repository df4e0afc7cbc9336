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
