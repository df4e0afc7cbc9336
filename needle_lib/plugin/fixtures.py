"""Recall fixtures and the ``scorecard``: the request lives here (setup), so infrastructure
failures are pytest ERRORs (search has its own, in ``plugin.search``).

``recall_answer`` sends one recall request, after two guards shared across xdist workers:
fail-fast (a model with N consecutive infrastructure errors is skipped) and a preflight (one
cheap request per (corpus, model) with the real prompt shape; when it fails, the case that
sent it errors with the message and the pair's other cases skip naming it, instead of
waiting out N timeouts; the model's other pairs still run). With a model's
``concurrency`` above 1 the dispatcher has sent the request ahead; the case still receives
its own answer or error here, in run order.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from needle_lib.contract.records import recall_case_record
from needle_lib.kernel.runstate import RunState
from needle_lib.llm import ChatResult
from needle_lib.llm.client import ChatClient
from needle_lib.plugin.collect import recall_case_of, recall_plan
from needle_lib.plugin.resume import is_kept, stored_answer
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.settings import run_state, settings, use_color
from needle_lib.plugin.shard import part_shard
from needle_lib.recall.dispatch import RecallDispatcher
from needle_lib.recall.plan import RecallCase, RecallClients, ask, preflight
from needle_lib.recall.results import answer_fields, stored_result
from needle_lib.tomlconf import ConfigError


@pytest.fixture
def scorecard(request: pytest.FixtureRequest) -> Scorecard:
    return Scorecard(request.node, color=use_color(request.config))


@pytest.fixture(scope="session")
def recall_client_pool() -> Iterator[RecallClients]:
    pool = RecallClients()
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def recall_dispatcher(request: pytest.FixtureRequest) -> RecallDispatcher:
    config, session = request.config, request.session

    def upcoming(pair: str) -> list[RecallCase]:
        # session.items is this process's run order; under xdist, --dist loadgroup (forced
        # with --concurrency) keeps a pair's cases on one worker.
        cases = (recall_case_of(item) for item in session.items)
        return [case for case in cases if case is not None and case.pair == pair
                and not is_kept(config, case)]

    return RecallDispatcher(
        upcoming, lambda case: tripped(config, f"model {case.model.key}") is None)


@pytest.fixture
def recall_answer(
    request: pytest.FixtureRequest,
    recall_case: RecallCase,
    recall_client_pool: RecallClients,
    recall_dispatcher: RecallDispatcher,
    scorecard: Scorecard,
) -> ChatResult:
    config = request.config
    plan = recall_plan(config)
    header = plan.header(recall_case).copy()  # the plan's is shared by the pair's cases
    if (shard := part_shard(config, recall_case.pair)) is not None:
        header["shard"] = shard
    scorecard.open_recall(recall_case.pair, header, recall_case_record(**recall_case.case_fields()))
    scorecard.set_detail("messages", plan.messages_for(recall_case))
    stored = stored_answer(config, recall_case)
    if stored is not None:
        scorecard.update_case(**stored, resumed=True)
        return stored_result(stored)

    state = run_state(config)
    model = f"model {recall_case.model.key}"
    fail_fast(config, scorecard, model)

    try:
        client = recall_client_pool.get(recall_case.model)  # resolves the API key
    except ConfigError as exc:
        error: str | None = f"model {recall_case.model.key}: {exc}"
    else:
        _preflight(state, scorecard, client, recall_case)
        error = None
    if error is None:
        sent = recall_dispatcher.answer(recall_case, lambda case: ask(client, case))
        scorecard.update_case(requested_at=round(sent.requested_at, 3))
        if sent.error is not None:
            error = str(sent.error)
    if error is not None:
        scorecard.update_case(error=error)
        state.note_error(model, error)
        pytest.fail(error, pytrace=False)
    result = sent.result
    assert result is not None  # a Sent holds an answer or an error
    state.note_success(model)
    fields = answer_fields(result)  # capped for storage: what is stored is what is scored
    scorecard.update_case(**fields)
    return stored_result(fields)


def _preflight(state: RunState, scorecard: Scorecard, client: ChatClient,
               case: RecallCase) -> None:
    """A failed preflight belongs to its (corpus, model) pair: the case that ran it errors
    with the message, the pair's other cases skip naming it, and neither counts toward the
    model's fail-fast, so the model's other pairs (a corpus that fits) still run."""
    ran_here: list[bool] = []

    def run() -> str | None:
        ran_here.append(True)
        return preflight(client, case)

    error = state.preflight(case.pair, run)
    if error is None:
        return
    if ran_here:
        scorecard.update_case(error=error)
        pytest.fail(error, pytrace=False)
    reason = f"preflight of {case.pair} failed: {error}"
    scorecard.update_case(skip_reason=reason)
    pytest.skip(reason)


def tripped(config: pytest.Config, subject: str) -> str | None:
    """The fail-fast reason when ``subject`` (a model or an engine) had too many
    consecutive errors, else None."""
    limit = settings(config).max_consecutive_errors
    count, last = run_state(config).consecutive_errors(subject)
    if limit and count >= limit:
        return f"fail-fast: {count} consecutive infrastructure errors for {subject}; last: {last}"
    return None


def fail_fast(config: pytest.Config, scorecard: Scorecard, subject: str) -> None:
    """Skip the case when fail-fast has tripped for ``subject``."""
    reason = tripped(config, subject)
    if reason is not None:
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)
