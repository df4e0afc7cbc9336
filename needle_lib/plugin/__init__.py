"""The Needle pytest plugin: options, case collection, fixtures, and the controller.

Workers (or the single process without xdist) collect cases and run them; fixtures send
requests, test bodies score and record. Only the controller process turns records into
dumps, summaries and gates, so dumps are written by one writer however many workers run.

A case's path, in order: ``recall/plan.py`` or ``search/plan.py`` (what is asked),
``fixtures.py`` / ``search/fixtures.py`` (the request, through ``recall/dispatch.py`` or
``search/dispatch.py`` + ``search/fetch.py``), ``scorecard.py`` (the record),
``controller.py`` (outcome, then ``recall/dumps.py`` or ``search/reports.py``). The rest
is session plumbing: options, usage checks, run state, shards, xdist distribution.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.console import force_utf8_streams
from needle_lib.llm import load_dotenv_once
from needle_lib.options import add_options, mistyped_options
from needle_lib.paths import EVALS_DIR
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
)
from needle_lib.plugin.lean import configure_lean_run, freeze_collected
from needle_lib.plugin.recall.contexts import share_contexts
from needle_lib.plugin.recall.resume import check_resume
from needle_lib.plugin.reports import default_html_report, drop_runner_metadata
from needle_lib.plugin.retention import CaseRetention
from needle_lib.plugin.runstate import RunState
from needle_lib.plugin.session import (
    COLOR_KEY,
    RUN_DIR_KEY,
    has_query_set,
    recall_plan,
    search_plan,
    state_key,
    use_color,
)
from needle_lib.plugin.shard import select_shard
from needle_lib.plugin.usage import validate_run
from needle_lib.rundirs import make_run_dir
from needle_lib.tomlconf import ConfigError

CONTROLLER = "needle-controller"
SEARCH_FIXTURES = "needle-search-fixtures"
SEARCH_RESUME = "needle-search-resume"
#: The eval modules of the search benches (``evals/test_news.py`` …).
SEARCH_MODULES = frozenset(f"test_{bench}.py" for bench in BENCH_NAMES)

__all__ = ["recall_answer", "recall_client_pool", "recall_dispatcher", "scorecard"]


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    add_options(parser)
    _hint_mistyped_options(parser, pluginmanager)


def _hint_mistyped_options(
    parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager
) -> None:
    """``--corpora`` gets pytest's "unrecognized arguments" and nothing more: add "did you
    mean --corpus?" to that error. pytest prints ``Parser.extra_info`` under a command line
    it cannot parse (and only then); the options of pytest and of installed plugins are
    known to the parser by now (this plugin loads from a conftest, after them), so a hint
    is only given for a name no one registered."""
    config = pluginmanager.get_plugin("pytestconfig")  # registered before any plugin loads
    if config is None:
        return

    def unknown(name: str) -> bool:
        try:
            return name in parser.parse_known_and_unknown_args([name])[1]
        except pytest.UsageError:
            return False  # a known option that wants a value

    hints = mistyped_options(config.invocation_params.args, unknown)
    if hints:
        parser.extra_info["needle"] = " ".join(hints)


@pytest.hookimpl(tryfirst=True)  # before pytest-html reads --html
def pytest_configure(config: pytest.Config) -> None:
    force_utf8_streams()
    configure_lean_run(config)
    load_dotenv_once()  # keys and NEEDLE_* settings from .env; exported variables win
    config.addinivalue_line("markers", "needle_recall: a positional-recall case")
    config.addinivalue_line("markers", "needle_placeholder: no case here (dropped)")
    if has_query_set(config):
        from needle_lib.plugin.search import fixtures as search_fixtures

        config.pluginmanager.register(search_fixtures, SEARCH_FIXTURES)
    config.pluginmanager.register(CaseRetention(config), "needle-retention")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        config.stash[state_key] = RunState(make_run_dir())
        config.pluginmanager.register(Controller(config), CONTROLLER)
        if has_query_set(config) and config.getoption("resume"):
            from needle_lib.plugin.search.resume import ControllerResume

            config.pluginmanager.register(ControllerResume(config), SEARCH_RESUME)
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
def pytest_metadata(metadata: dict[str, object], config: pytest.Config) -> None:
    """The report's environment table is the evaluation's (``plugin/reports.py``), not
    pytest's: drop the runner's entries, in workers too (xdist merges theirs back)."""
    drop_runner_metadata(metadata)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: hand each worker the shared run directory, the colour decision, the
    scheduling mode and what the model servers said about their contexts."""
    node.workerinput[RUN_DIR_KEY] = str(node.config.stash[state_key].path.parent)
    node.workerinput[COLOR_KEY] = use_color(node.config)
    share_dist(node)
    share_contexts(node)


def pytest_unconfigure(config: pytest.Config) -> None:
    for name in (CONTROLLER, SEARCH_FIXTURES, SEARCH_RESUME):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:  # as junitxml does: a later session in-process starts clean
            config.pluginmanager.unregister(plugin)
    state = config.stash.get(state_key, None)
    if state is None:
        return
    state.close()
    if not hasattr(config, "workerinput"):
        shutil.rmtree(state.path.parent, ignore_errors=True)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Without a query set a search bench has no case: its eval module is not even
    imported, so a recall run neither loads the search half nor plans search cases."""
    if (collection_path.name in SEARCH_MODULES
            and collection_path.parent.resolve() == EVALS_DIR.resolve()  # NEEDLE_ROOT links
            and not has_query_set(config)):
        return True
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "search_case" in metafunc.fixturenames:
        _parametrize_search(metafunc)
    if "recall_case" not in metafunc.fixturenames:
        return
    plan = recall_plan(metafunc.config)
    check_resume(metafunc.config, plan)
    if not plan.cases:  # no case, not one "empty parameter set" skip: the run exits 5
        metafunc.parametrize("recall_case", [
            pytest.param(None, id="recall", marks=pytest.mark.needle_placeholder)])
        return
    metafunc.parametrize(
        "recall_case",
        [
            pytest.param(case, id=case.id,
                         marks=[pytest.mark.needle_recall, pytest.mark.xdist_group(case.pair)])
            for case in plan.cases
        ],
    )


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object):
    """Drop the placeholder of a bench with nothing to run as it is made, so it is never
    counted as collected, deselected or skipped."""
    made = yield
    if isinstance(made, list):
        return [item for item in made
                if not any(mark.name == "needle_placeholder"
                           for mark in getattr(item, "own_markers", ()))]
    return made


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: shards split what is left
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep_group_suffixes(config, items)  # after xdist's hook, which adds them
    select_shard(config, items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    freeze_collected(session.config)


def _parametrize_search(metafunc: pytest.Metafunc) -> None:
    """Query × engine cases for the module's ``BENCH``; none without ``--queries`` or
    without rows for the bench."""
    bench = getattr(metafunc.module, "BENCH", metafunc.module.__name__.removeprefix("test_"))
    plan = search_plan(metafunc.config)
    try:
        cases = plan.cases(bench) if plan.queries_path is not None else []
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not cases:
        _no_cases(metafunc, bench)
        return
    # one mark per engine, shared by its cases: made per case, marks were a tenth of the
    # collection of a 20,000-case query set
    groups = {engine: pytest.mark.xdist_group(f"engine-{engine}")
              for engine in dict.fromkeys(case.engine for case in cases)}
    metafunc.parametrize("search_case", [
        pytest.param(case, id=case.id, marks=groups[case.engine]) for case in cases
    ])


def _no_cases(metafunc: pytest.Metafunc, bench: str) -> None:
    """A bench with nothing to run contributes no case: a placeholder that
    ``pytest_pycollect_makeitem`` drops (parametrizing is the one way to give the test its
    ``search_case``). When nothing at all runs, the controller says how to run one."""
    metafunc.parametrize("search_case", [
        pytest.param(None, id=bench, marks=pytest.mark.needle_placeholder)])


def _default_dist_for_search(config: pytest.Config) -> None:
    """Search runs under xdist default to ``--dist loadgroup`` (one request at a time per
    engine, for comparable latency), unless the user chose a mode."""
    if config.getoption("queries", None):
        default_to_loadgroup(config)
