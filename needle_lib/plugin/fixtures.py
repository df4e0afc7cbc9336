"""Fixtures: the request lives here (setup), so infrastructure failures are pytest ERRORs.

``recall_answer`` sends one recall request, after two guards shared across xdist workers:
fail-fast (a model with N consecutive infrastructure errors is skipped) and a preflight (one
cheap request per (corpus, model) with the real prompt shape; when it fails, every case of
the pair errors with that one message instead of waiting out N timeouts).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from needle_lib.llm import ChatResult, LLMError
from needle_lib.plugin.recall import RecallCase, RecallClients, ask, preflight
from needle_lib.plugin.resume import stored_answer
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.session import recall_plan, run_state, use_color
from needle_lib.recall.results import EMPTY_CASE, answer_fields
from needle_lib.tomlconf import ConfigError


@pytest.fixture
def scorecard(request: pytest.FixtureRequest) -> Scorecard:
    return Scorecard(request.node, color=use_color(request.config))


@pytest.fixture(scope="session")
def recall_client_pool() -> Iterator[RecallClients]:
    pool = RecallClients()
    yield pool
    pool.close()


@pytest.fixture
def recall_answer(
    request: pytest.FixtureRequest,
    recall_case: RecallCase,
    recall_client_pool: RecallClients,
    scorecard: Scorecard,
) -> ChatResult:
    config = request.config
    plan = recall_plan(config)
    scorecard.open(
        "recall", recall_case.pair, plan.header(recall_case),
        case={**EMPTY_CASE, **recall_case.case_fields()},
    )
    scorecard.set_detail("messages", plan.messages_for(recall_case))
    stored = stored_answer(config, recall_case)
    if stored is not None:
        scorecard.update_case(**answer_fields(stored), resumed=True)
        return stored

    state = run_state(config)
    model = recall_case.model.key
    limit = config.getoption("max_consecutive_errors")
    count, last = state.consecutive_errors(model)
    if limit and count >= limit:
        reason = (f"fail-fast: {count} consecutive infrastructure errors for model {model}; "
                  f"last: {last}")
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)

    client = recall_client_pool.get(recall_case.model)
    error = state.preflight(recall_case.pair, lambda: preflight(client, recall_case))
    if error is None:
        scorecard.update_case(requested_at=round(time.time(), 3))
        try:
            result = ask(client, recall_case)
        except (LLMError, ConfigError) as exc:
            error = str(exc)
    if error is not None:
        scorecard.update_case(error=error)
        state.note_error(model, error)
        pytest.fail(error, pytrace=False)
    state.note_success(model)
    scorecard.update_case(**answer_fields(result))
    return result
