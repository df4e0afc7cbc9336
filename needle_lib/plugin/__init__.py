"""The Needle pytest plugin: its hooks, and nothing else.

Workers (or the single process without xdist) collect cases and run them: a case's setup
asks and scores it through its benchmark (``kernel.benchmark.Benchmark``, the same steps
for every benchmark: ``fixtures.settle``), its body asserts the verdict. Only the
controller process turns records into dumps, summaries and gates, so dumps are written by
one writer however many workers run.

A case's path, in order: ``collect`` (the plan: ``recall.plan`` or ``benches.plan``, what
is asked), ``fixtures`` / ``search`` (the case's ``Benchmark``: ``recall.benchmark`` or
``benches.benchmark``, asking through ``recall.dispatch`` or ``benches.dispatch``),
``scorecard`` (the record), ``controller`` (outcome, then ``recall.dumps`` or
``benches.run_reports``; ``html`` for the page). The rest is session plumbing:
``settings`` (the run's options, read once), ``resume``, ``shard`` (machines and xdist
workers), ``runtime`` (what the process keeps) and ``internals`` (the only module that
touches a private attribute of pytest, xdist or pytest-html).
"""

from __future__ import annotations

import shutil
from collections.abc import Generator
from pathlib import Path

import pytest

from needle_lib.console import force_utf8_streams
from needle_lib.kernel.runstate import RunState
from needle_lib.llm import load_dotenv_once
from needle_lib.options import add_options, mistyped_options
from needle_lib.plugin import collect, resume, runtime, shard
from needle_lib.plugin.controller import Controller
from needle_lib.plugin.fixtures import recall_benchmark, recall_verdict, scorecard
from needle_lib.plugin.html import HtmlReport, default_html_report, drop_runner_metadata
from needle_lib.plugin.internals import keep_group_suffixes
from needle_lib.plugin.settings import (
    COLOR_KEY,
    RUN_DIR_KEY,
    WorkerNode,
    is_worker,
    state_key,
    store_settings,
    use_color,
)
from needle_lib.rundirs import make_run_dir

CONTROLLER = "needle-controller"
HTML = "needle-html"
SEARCH_FIXTURES = "needle-search-fixtures"
RESUME = "needle-resume"

__all__ = ["recall_benchmark", "recall_verdict", "scorecard"]


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
    runtime.configure_lean_run(config)
    load_dotenv_once()  # keys and NEEDLE_* settings from .env; exported variables win
    run = store_settings(config)
    config.addinivalue_line("markers", "needle_recall: a positional-recall case")
    config.addinivalue_line("markers", f"{collect.PLACEHOLDER}: no case here (dropped)")
    if run.has_query_set:
        from needle_lib.plugin import search  # the search half, only with a query set

        config.pluginmanager.register(search, SEARCH_FIXTURES)
    config.pluginmanager.register(runtime.CaseRetention(config), "needle-retention")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        config.stash[state_key] = RunState(make_run_dir())
        default_html_report(config)
        html = HtmlReport(config)
        config.pluginmanager.register(html, HTML)
        config.pluginmanager.register(Controller(config, html), CONTROLLER)
        if run.resume:
            config.pluginmanager.register(resume.ControllerResume(config), RESUME)
        shard.default_dist_for_search(config)
    else:
        config.stash[state_key] = RunState(Path(workerinput[RUN_DIR_KEY]))
        shard.adopt_dist(config)


@pytest.hookimpl(tryfirst=True)  # before xdist starts workers and the terminal prints a header
def pytest_sessionstart(session: pytest.Session) -> None:
    if not is_worker(session.config):
        collect.validate_run(session.config)
        resume.check_resume_at_start(session.config)
        shard.check_grouping(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_metadata(metadata: dict[str, object], config: pytest.Config) -> None:
    """The report's environment table is the evaluation's (``plugin/html.py``), not
    pytest's: drop the runner's entries, in workers too (xdist merges theirs back)."""
    drop_runner_metadata(metadata)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: WorkerNode) -> None:
    """xdist: hand each worker the shared run directory, the colour decision, the
    scheduling mode and what the model servers said about their contexts."""
    node.workerinput[RUN_DIR_KEY] = str(node.config.stash[state_key].path.parent)
    node.workerinput[COLOR_KEY] = use_color(node.config)
    shard.share_dist(node)
    collect.share_contexts(node)


def pytest_unconfigure(config: pytest.Config) -> None:
    for name in (CONTROLLER, HTML, SEARCH_FIXTURES, RESUME):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:  # as junitxml does: a later session in-process starts clean
            config.pluginmanager.unregister(plugin)
    state = config.stash.get(state_key, None)
    if state is None:
        return
    state.close()
    if not is_worker(config):
        shutil.rmtree(state.path.parent, ignore_errors=True)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if collect.skip_search_module(collection_path, config) else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "search_case" in metafunc.fixturenames:
        collect.parametrize_search(metafunc)
    if "recall_case" in metafunc.fixturenames:
        collect.parametrize_recall(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Collector, name: str, obj: object
) -> Generator[None, object, object]:
    made = yield
    return collect.without_placeholders(made)


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: shards split what is left
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep_group_suffixes(config, items)  # after xdist's hook, which adds them
    shard.select_shard(config, items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    runtime.freeze_collected(session.config)
