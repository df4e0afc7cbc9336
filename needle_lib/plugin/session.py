"""Per-process session objects of the plugin, kept in ``config.stash``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.console import want_color
from needle_lib.errors import UsageError as NeedleUsageError
from needle_lib.paths import EVALS_DIR, RESULTS_DIR
from needle_lib.plugin.recall.plan import RecallPlan, build_plan
from needle_lib.plugin.runstate import RunState
from needle_lib.plugin.shard import part_path, writes_parts
from needle_lib.recall.store import ResultStore

if TYPE_CHECKING:
    from needle_lib.plugin.search.plan import SearchPlan

RUN_DIR_KEY = "needle_run_dir"
plan_key = pytest.StashKey[RecallPlan]()
state_key = pytest.StashKey[RunState]()
search_plan_key = pytest.StashKey["SearchPlan"]()


def recall_plan(config: pytest.Config) -> RecallPlan:
    """The run's recall plan, built once per process; Needle's usage errors become pytest's
    (exit 4). Anything else is a bug and keeps its traceback."""
    if plan_key not in config.stash:
        try:
            config.stash[plan_key] = build_plan(config)
        except NeedleUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[plan_key]


def search_plan(config: pytest.Config) -> SearchPlan:
    """The run's search plan (queries × engines), built once per process; every bench's
    rows are checked here, so a malformed gold row is one usage error before collection."""
    if search_plan_key not in config.stash:
        from needle_lib.plugin.search.plan import (  # the search half, on demand
            build_search_plan,
            require_judge,
        )

        try:
            plan = build_search_plan(config)
            for bench in BENCH_NAMES:
                plan.bench_queries(bench)
            require_judge(plan, selected_benches(config), config.getoption("judge_model"))
        except NeedleUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[search_plan_key] = plan
    return config.stash[search_plan_key]


def selected_benches(config: pytest.Config) -> list[str]:
    """The search benches whose eval module the command line selects (``evals`` selects
    all); ``-k`` is applied later, by pytest."""
    modules = {bench: (EVALS_DIR / f"test_{bench}.py").resolve() for bench in BENCH_NAMES}
    paths = selected_paths(config)
    return [bench for bench, module in modules.items()
            if any(path == module or path in module.parents for path in paths)]


def has_query_set(config: pytest.Config) -> bool:
    """Whether the run can have search cases: only a query set (``--queries``) makes them.
    Without one, the search half of the plugin is neither registered nor imported."""
    return bool(config.getoption("queries", None))


def selected_paths(config: pytest.Config) -> list[Path]:
    """The files and directories the command line selects (``path::test`` → ``path``),
    resolved."""
    paths = []
    for arg in config.args:
        path = Path(arg.split("::")[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        paths.append(path.resolve())
    return paths


def results_dir(config: pytest.Config) -> Path:
    value = config.getoption("results_dir")
    return Path(value) if value else RESULTS_DIR


def dump_path(config: pytest.Config, pair: str) -> Path | None:
    """The one file a run's dump of ``pair`` must go to: ``--dump`` when given (a single
    (corpus, model) run), or a part under ``<results>/parts/`` when ``--shard-by case``
    splits the pair; None when the result store chooses (a new run file per run)."""
    explicit = config.getoption("dump")
    if explicit:
        return Path(explicit)
    if writes_parts(config):
        return part_path(results_dir(config), pair, config.getoption("shard"))
    return None


def result_store(config: pytest.Config) -> ResultStore:
    return ResultStore(results_dir(config))


def run_state(config: pytest.Config) -> RunState:
    return config.stash[state_key]


COLOR_KEY = "needle_color"
color_key = pytest.StashKey[bool]()


def decide_color(config: pytest.Config) -> bool:
    """The controller decides once (its stdout is the user's terminal) and tells workers."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get(COLOR_KEY, False))
    flag = None
    if config.getoption("no_color"):
        flag = False
    elif config.getoption("color") in ("yes", "no"):
        flag = config.getoption("color") == "yes"
    return want_color(sys.stdout, flag)


def use_color(config: pytest.Config) -> bool:
    if color_key not in config.stash:
        config.stash[color_key] = decide_color(config)
    return config.stash[color_key]
