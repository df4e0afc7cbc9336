"""``--resume``: reuse the scored cases of an earlier dump, ask only for the rest.

A dump can only be resumed by a run of the same setup (``contract.setup``: prompt and scorer
versions, corpus text, request shape, sampling, scoring; a base URL, timeout, label or
concurrency may differ). Anything else is refused with the differing leaves named, because
mixing cases from two setups makes a number that describes neither. Answered cases (scored
or skipped by the policy) are kept; errors and fail-fast skips are asked again.
"""

from __future__ import annotations

from typing import Any

import pytest

from needle_lib.contract.outcome import is_answered
from needle_lib.contract.setup import refusal, setup_differences
from needle_lib.jsonio import read_json
from needle_lib.llm import ChatResult
from needle_lib.plugin.recall import RecallCase, RecallPlan
from needle_lib.plugin.session import dump_path
from needle_lib.recall.results import new_dump, stored_result

_cache_key = pytest.StashKey[dict[str, dict[str, dict[str, Any]]]]()


def check_resume(config: pytest.Config, plan: RecallPlan) -> None:
    """Refuse (usage error) to resume any dump whose provenance differs from this run.
    Runs once per process (at session start on the controller, else at collection)."""
    if not config.getoption("resume") or _cache_key in config.stash:
        return
    seen: dict[str, dict[str, dict[str, Any]]] = {}
    for case in plan.cases:
        if case.pair in seen:
            continue
        path = dump_path(config, case.pair)
        seen[case.pair] = {}
        if not path.is_file():
            continue
        try:
            previous = read_json(path)
        except ValueError as exc:
            raise pytest.UsageError(f"--resume: {path} is not valid JSON: {exc}") from None
        diffs = setup_differences(previous, new_dump(plan.header(case)))
        if diffs:
            raise pytest.UsageError(refusal(
                f"--resume: {path} was produced by a different setup; refusing to mix",
                diffs, ("dump", "this run")))
        seen[case.pair] = {c["case_id"]: c for c in previous.get("cases", []) if is_answered(c)}
    config.stash[_cache_key] = seen


def stored_answer(config: pytest.Config, case: RecallCase) -> ChatResult | None:
    stored = config.stash.get(_cache_key, {}).get(case.pair, {}).get(case.target.case_id)
    return stored_result(stored) if stored is not None else None
