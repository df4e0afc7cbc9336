"""The Needle pytest plugin: options, case collection, fixtures, and the controller.

Workers (or the single process without xdist) collect cases and run them; fixtures send
requests, test bodies score and record. Only the controller process turns records into
dumps, summaries and gates, so dumps are written by one writer however many workers run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from needle_lib.console import force_utf8_streams
from needle_lib.llm import load_dotenv_once
from needle_lib.plugin.controller import Controller
from needle_lib.plugin.distribution import (
    adopt_dist,
    default_to_loadgroup,
    keep_group_suffixes,
    share_dist,
)
from needle_lib.plugin.fixtures import (
    recall_answer,
    recall_client_pool,
    recall_dispatcher,
    scorecard,
    search_clients,
    search_dispatcher,
    search_judged,
    search_matched,
)
from needle_lib.plugin.options import add_options
from needle_lib.plugin.reports import default_html_report
from needle_lib.plugin.resume import check_resume
from needle_lib.plugin.runstate import RunState
from needle_lib.plugin.search import HOW_TO_RUN
from needle_lib.plugin.session import (
    COLOR_KEY,
    RUN_DIR_KEY,
    recall_plan,
    search_plan,
    state_key,
    use_color,
)
from needle_lib.plugin.shard import select_shard
from needle_lib.plugin.usage import validate_run
from needle_lib.tomlconf import ConfigError

__all__ = [
    "recall_answer",
    "recall_client_pool",
    "recall_dispatcher",
    "scorecard",
    "search_clients",
    "search_dispatcher",
    "search_judged",
    "search_matched",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # before pytest-html reads --html
def pytest_configure(config: pytest.Config) -> None:
    force_utf8_streams()
    load_dotenv_once()  # keys and NEEDLE_* settings from .env; exported variables win
    config.addinivalue_line("markers", "needle_recall: a positional-recall case")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        config.stash[state_key] = RunState(Path(tempfile.mkdtemp(prefix="needle-run-")))
        config.pluginmanager.register(Controller(config), "needle-controller")
        default_html_report(config)
        _default_dist_for_search(config)
    else:
        config.stash[state_key] = RunState(Path(workerinput[RUN_DIR_KEY]))
        adopt_dist(config)


@pytest.hookimpl(tryfirst=True)  # before xdist starts workers and the terminal prints a header
def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        validate_run(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: hand each worker the shared run directory, the colour decision and the
    scheduling mode."""
    node.workerinput[RUN_DIR_KEY] = str(node.config.stash[state_key].path.parent)
    node.workerinput[COLOR_KEY] = use_color(node.config)
    share_dist(node)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(state_key, None)
    if state is None:
        return
    state.close()
    if not hasattr(config, "workerinput"):
        shutil.rmtree(state.path.parent, ignore_errors=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "search_case" in metafunc.fixturenames:
        _parametrize_search(metafunc)
    if "recall_case" not in metafunc.fixturenames:
        return
    plan = recall_plan(metafunc.config)
    check_resume(metafunc.config, plan)
    metafunc.parametrize(
        "recall_case",
        [
            pytest.param(case, id=case.id,
                         marks=[pytest.mark.needle_recall, pytest.mark.xdist_group(case.pair)])
            for case in plan.cases
        ],
    )


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: shards split what is left
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep_group_suffixes(config, items)  # after xdist's hook, which adds them
    select_shard(config, items)


def _parametrize_search(metafunc: pytest.Metafunc) -> None:
    """Query × engine cases for the module's ``BENCH``; one explanatory skip without
    ``--queries``, so the default offline run stays green and says how to run them."""
    bench = getattr(metafunc.module, "BENCH", metafunc.module.__name__.removeprefix("test_"))
    plan = search_plan(metafunc.config)
    if plan.queries_path is None:
        _skip_bench(metafunc, bench, HOW_TO_RUN)
        return
    try:
        cases = plan.cases(bench)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not cases:
        _skip_bench(metafunc, bench, f"{plan.queries_path} has no {bench} rows "
                                     f"(rows name their bench in 'query_source')")
        return
    metafunc.parametrize("search_case", [
        pytest.param(case, id=case.id, marks=[pytest.mark.xdist_group(f"engine-{case.engine}")])
        for case in cases
    ])


def _skip_bench(metafunc: pytest.Metafunc, bench: str, reason: str) -> None:
    """One explanatory skip instead of cases, so the run stays green and says why."""
    metafunc.parametrize("search_case", [pytest.param(None, id=bench, marks=pytest.mark.skip(
        reason=reason))])


def _default_dist_for_search(config: pytest.Config) -> None:
    """Search runs under xdist default to ``--dist loadgroup`` (one request at a time per
    engine, for comparable latency), unless the user chose a mode."""
    if config.getoption("queries", None):
        default_to_loadgroup(config)
