"""``--resume``: reuse the scored cases of an earlier dump, ask only for the rest.

A dump can only be resumed by a run that would have produced it: same prompt and scorer
versions, corpus text, request shape, sampling and scoring. Anything else is refused with
the differing fields named, because mixing cases from two setups makes a number that
describes neither.
"""

from __future__ import annotations

from typing import Any

import pytest

from needle_lib.jsonio import read_json
from needle_lib.llm import ChatResult
from needle_lib.plugin.recall import RecallCase, RecallPlan
from needle_lib.plugin.session import dump_path
from needle_lib.recall.results import (
    FAILED,
    PASSED,
    new_dump,
    provenance_differences,
    stored_result,
)

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
        diffs = provenance_differences(previous, new_dump(plan.header(case)))
        if diffs:
            raise pytest.UsageError(
                f"--resume: {path} was produced by a different setup; refusing to mix:\n  "
                + "\n  ".join(diffs)
            )
        seen[case.pair] = {
            c["case_id"]: c for c in previous.get("cases", []) if c["outcome"] in (PASSED, FAILED)
        }
    config.stash[_cache_key] = seen


def stored_answer(config: pytest.Config, case: RecallCase) -> ChatResult | None:
    stored = config.stash.get(_cache_key, {}).get(case.pair, {}).get(case.target.case_id)
    return stored_result(stored) if stored is not None else None
