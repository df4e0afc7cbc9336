"""What a run collects: the plans (built once per process), the cases they parametrise,
and the checks that stop a bad run before it starts.

Plans are built lazily during collection, where pytest reports an exception as a collection
error wrapped in pluggy's frames. The controller builds them at session start instead
(``validate_run``), for what the command line selects, so a broken config, an unknown
engine or a malformed query file is one ``ERROR:`` line (exit 4) before any worker starts
or any request is sent. Building them costs tens of milliseconds (parsed corpora come from
the on-disk cache) and, without xdist, the collection reuses them.

A repo corpus sized to the models' contexts needs what their servers report; the
controller asks, once per (server, model), and only when a budget depends on it; xdist
workers receive the answers instead of asking again, so every process builds the same
corpus and collects the same cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.clock import utc_now
from needle_lib.errors import UsageError as NeedleUsageError
from needle_lib.llm import ModelConfig
from needle_lib.llm.listening import not_listening, refuses
from needle_lib.llm.server_context import ServerContext, ServerContextJSON, probe_context
from needle_lib.paths import EVALS_DIR
from needle_lib.plugin.settings import WorkerNode, settings
from needle_lib.recall.plan import RecallCase, RecallPlan, build_plan
from needle_lib.recall.repo import KnownContext
from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:
    from needle_lib.benches.plan import SearchCase, SearchPlan

RECALL_MODULE = EVALS_DIR / "test_recall.py"
#: The eval modules of the search benches (``evals/test_news.py`` …).
SEARCH_MODULES = frozenset(f"test_{bench}.py" for bench in BENCH_NAMES)
CONTEXTS_KEY = "needle_model_contexts"
PLACEHOLDER = "needle_placeholder"

plan_key = pytest.StashKey[RecallPlan]()
search_plan_key = pytest.StashKey["SearchPlan"]()
contexts_key = pytest.StashKey[dict[str, ServerContextJSON | None]]()


def recall_plan(config: pytest.Config) -> RecallPlan:
    """The run's recall plan, built once per process; Needle's usage errors become pytest's
    (exit 4). Anything else is a bug and keeps its traceback."""
    if plan_key not in config.stash:
        try:
            config.stash[plan_key] = build_plan(
                settings(config), lambda models: known_contexts(config, models))
        except NeedleUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[plan_key]


def search_plan(config: pytest.Config) -> SearchPlan:
    """The run's search plan (queries × engines), built once per process; every bench's
    rows are checked here, so a malformed gold row is one usage error before collection."""
    if search_plan_key not in config.stash:
        from needle_lib.benches.plan import (  # the search half, on demand
            build_search_plan,
            require_judge,
        )

        run = settings(config)
        try:
            plan = build_search_plan(run)
            for bench in BENCH_NAMES:
                plan.bench_queries(bench)
            require_judge(plan, selected_benches(config), run.judge_model)
        except NeedleUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[search_plan_key] = plan
    return config.stash[search_plan_key]


def selected_paths(config: pytest.Config) -> list[Path]:
    """The files and directories the command line selects (``path::test`` → ``path``),
    resolved."""
    paths = []
    for arg in config.args:
        path = Path(arg.split("::")[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        paths.append(path.resolve())
    return paths


def selects(config: pytest.Config, module: Path) -> bool:
    """Whether the command line names ``module`` or a directory holding it."""
    module = module.resolve()
    return any(path == module or path in module.parents for path in selected_paths(config))


def selected_benches(config: pytest.Config) -> list[str]:
    """The search benches whose eval module the command line selects (``evals`` selects
    all); ``-k`` is applied later, by pytest."""
    return [bench for bench in BENCH_NAMES if selects(config, EVALS_DIR / f"test_{bench}.py")]


def _probed(config: pytest.Config, model: ModelConfig) -> ServerContext | None:
    """The server's answer for ``model``: from the controller (workers), else asked now."""
    cache = config.stash.setdefault(contexts_key, {})
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and model.key not in cache:
        shared = workerinput.get(CONTEXTS_KEY, {})
        cache[model.key] = shared.get(model.key)
    if model.key not in cache:
        found = probe_context(model)
        cache[model.key] = found.to_json() if found else None
    answer = cache[model.key]
    return ServerContext.from_json(answer) if answer else None


def known_contexts(config: pytest.Config, models: list[ModelConfig]) -> list[KnownContext]:
    """Each model's context: its config's ``context_tokens``, else what its server loaded,
    else the model's maximum as its server reports it (a ceiling), else nothing."""
    known = []
    for model in models:
        if model.context_tokens is not None:
            known.append(KnownContext(model.context_tokens, f"context_tokens of {model.source}"))
            continue
        server = _probed(config, model)
        if server is None:
            continue
        if server.loaded is not None:
            known.append(KnownContext(server.loaded, server.source))
        elif server.maximum is not None:
            known.append(KnownContext(server.maximum, server.source, ceiling=True))
    return known


def share_contexts(node: WorkerNode) -> None:
    """xdist: hand a worker the controller's answers."""
    answers: dict[str, ServerContextJSON | None] = node.config.stash.get(contexts_key, {})
    node.workerinput[CONTEXTS_KEY] = dict(answers)


def recall_case_of(item: pytest.Item) -> RecallCase | None:
    """The recall case a collected test item runs, if it is one."""
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("recall_case") if callspec else None
    return case if isinstance(case, RecallCase) else None


def search_case_of(item: pytest.Item) -> SearchCase | None:
    """The search case a collected test item runs, if it is one (a bench's placeholder,
    never kept, has None)."""
    callspec = getattr(item, "callspec", None)
    case: SearchCase | None = callspec.params.get("search_case") if callspec else None
    return case


def case_of(item: pytest.Item) -> RecallCase | SearchCase | None:
    return recall_case_of(item) or search_case_of(item)


def skip_search_module(collection_path: Path, config: pytest.Config) -> bool:
    """Without a query set a search bench has no case: its eval module is not even
    imported, so a recall run neither loads the search half nor plans search cases."""
    return (collection_path.name in SEARCH_MODULES
            and collection_path.parent.resolve() == EVALS_DIR.resolve()  # NEEDLE_ROOT links
            and not settings(config).has_query_set)


def parametrize_recall(metafunc: pytest.Metafunc) -> RecallPlan:
    """Corpus × target × model cases, one ``xdist_group`` per pair."""
    plan = recall_plan(metafunc.config)
    if not plan.cases:  # no case, not one "empty parameter set" skip: the run exits 5
        _no_cases(metafunc, "recall_case", "recall")
        return plan
    metafunc.parametrize(
        "recall_case",
        [
            pytest.param(case, id=case.id,
                         marks=[pytest.mark.needle_recall, pytest.mark.xdist_group(case.pair)])
            for case in plan.cases
        ],
    )
    return plan


def parametrize_search(metafunc: pytest.Metafunc) -> None:
    """Query × engine cases for the module's ``BENCH``; none without ``--queries`` or
    without rows for the bench."""
    bench = getattr(metafunc.module, "BENCH", metafunc.module.__name__.removeprefix("test_"))
    plan = search_plan(metafunc.config)
    try:
        cases = plan.cases(bench) if plan.queries_path is not None else []
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not cases:
        _no_cases(metafunc, "search_case", bench)
        return
    # one mark per engine, shared by its cases: made per case, marks were a tenth of the
    # collection of a 20,000-case query set
    groups = {engine: pytest.mark.xdist_group(f"engine-{engine}")
              for engine in dict.fromkeys(case.engine for case in cases)}
    metafunc.parametrize("search_case", [
        pytest.param(case, id=case.id, marks=groups[case.engine]) for case in cases
    ])


def _no_cases(metafunc: pytest.Metafunc, argname: str, name: str) -> None:
    """A bench with nothing to run contributes no case: a placeholder that
    ``without_placeholders`` drops (parametrizing is the one way to give the test its
    argument). When nothing at all runs, the controller says how to run one."""
    metafunc.parametrize(argname, [
        pytest.param(None, id=name, marks=pytest.mark.needle_placeholder)])


def without_placeholders(made: object) -> object:
    """What ``pytest_pycollect_makeitem`` made, minus the placeholder of a bench with
    nothing to run, so it is never counted as collected, deselected or skipped."""
    if isinstance(made, list):
        return [item for item in made
                if not any(mark.name == PLACEHOLDER
                           for mark in getattr(item, "own_markers", ()))]
    return made


def _has_key(model: ModelConfig) -> bool:
    try:
        model.resolve_api_key()
    except ConfigError:
        return False
    return True


def check_servers(config: pytest.Config, plan: RecallPlan) -> None:
    """A model whose local server refuses connections stops the run before any case: one
    line naming --base-url, not a retried preflight and an INVALID dump per pair."""
    run = settings(config)
    if run.collectonly or not plan.cases:
        return
    checked: set[str] = set()
    for model in plan.models:
        if model.is_reference or model.base_url in checked or not _has_key(model):
            continue  # a missing key is the first thing to fix: its cases say so
        checked.add(model.base_url)
        if refuses(model.base_url):
            raise pytest.UsageError(not_listening(model, run.base_url is not None))


def validate_run(config: pytest.Config) -> None:
    """Build what collection will need and check option combinations; raises UsageError.
    (``resume.check_resume_at_start`` and ``shard.check_grouping`` follow, on the plans
    built here.)"""
    run = settings(config)
    if run.searching and run.dump:
        # One path for two kinds of file: the search report would overwrite the recall dump.
        raise pytest.UsageError(
            "--dump names the recall dump; a search run writes its report to --report PATH"
        )
    if run.searching:
        search_plan(config)  # engine configs too: a broken one is one usage error, up front
    if run.has_query_set:
        try:
            utc_now()  # a malformed NEEDLE_NOW: one usage error, not one per judgement
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
    if runs_recall(config):
        check_servers(config, recall_plan(config))


def runs_recall(config: pytest.Config) -> bool:
    """Whether the command line selects the recall eval module."""
    return selects(config, RECALL_MODULE)
