"""Usage errors before the run starts: one ``ERROR:`` line naming the file and key, exit 4.

Plans are built lazily during collection, where pytest reports an exception as a collection
error wrapped in pluggy's frames. The controller builds them at session start instead, for
what the command line selects, so a broken config, an unknown engine or a malformed query
file stops the run before any worker starts or any request is sent. Building them costs
tens of milliseconds (parsed corpora come from the on-disk cache) and, without xdist, the
collection reuses them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from needle_lib.clock import utc_now
from needle_lib.llm import ModelConfig
from needle_lib.llm.listening import not_listening, refuses
from needle_lib.paths import EVALS_DIR
from needle_lib.plugin.distribution import require_grouping
from needle_lib.plugin.recall.plan import RecallPlan
from needle_lib.plugin.recall.resume import check_explicit_dump, check_resume
from needle_lib.plugin.session import has_query_set, recall_plan, search_plan, selected_paths
from needle_lib.tomlconf import ConfigError

RECALL_MODULE = EVALS_DIR / "test_recall.py"


def _selects(config: pytest.Config, module: Path) -> bool:
    """Whether the command line names ``module`` or a directory holding it."""
    module = module.resolve()
    return any(path == module or path in module.parents for path in selected_paths(config))


def _has_key(model: ModelConfig) -> bool:
    try:
        model.resolve_api_key()
    except ConfigError:
        return False
    return True


def check_servers(config: pytest.Config, plan: RecallPlan) -> None:
    """A model whose local server refuses connections stops the run before any case: one
    line naming --base-url, not a retried preflight and an INVALID dump per pair."""
    if config.getoption("collectonly") or not plan.cases:
        return
    checked: set[str] = set()
    for model in plan.models:
        if model.is_reference or model.base_url in checked or not _has_key(model):
            continue  # a missing key is the first thing to fix: its cases say so
        checked.add(model.base_url)
        if refuses(model.base_url):
            raise pytest.UsageError(not_listening(model, config.getoption("base_url") is not None))


def validate_run(config: pytest.Config) -> None:
    """Build what collection will need and check option combinations; raises UsageError."""
    searching = bool(config.getoption("queries") or config.getoption("engines"))
    if searching and config.getoption("dump"):
        # One path for two kinds of file: the search report would overwrite the recall dump.
        raise pytest.UsageError(
            "--dump names the recall dump; a search run writes its report to --report PATH"
        )
    if searching:
        search_plan(config)  # engine configs too: a broken one is one usage error, up front
    if has_query_set(config):
        from needle_lib.plugin.search.resume import plan_resume  # the search half, on demand

        try:
            utc_now()  # a malformed NEEDLE_NOW: one usage error, not one per judgement
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None

        plan_resume(config)  # --resume: each bench's earlier run, read before anything writes
    if not _selects(config, RECALL_MODULE):
        return
    plan = recall_plan(config)
    check_resume(config, plan)
    check_explicit_dump(config, plan)
    check_servers(config, plan)
    concurrent = [m.key for m in plan.models if m.concurrency > 1]
    if concurrent and getattr(config.option, "dist", "no") != "no":
        require_grouping(config, f"concurrency > 1 (model {concurrent[0]})")
