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

from needle_lib.benches.rows import row_day
from needle_lib.judge import JudgeError
from needle_lib.llm import ChatResult, LLMError
from needle_lib.plugin.recall import RecallCase, RecallClients, ask, preflight
from needle_lib.plugin.resume import stored_answer
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.search import SearchCase, SearchClients, judged_result
from needle_lib.plugin.session import recall_plan, run_state, search_plan, use_color
from needle_lib.recall.results import EMPTY_CASE, answer_fields
from needle_lib.search.types import MissingAPIKey
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
    model = f"model {recall_case.model.key}"
    _fail_fast(config, scorecard, model)

    try:
        client = recall_client_pool.get(recall_case.model)  # resolves the API key
    except ConfigError as exc:
        error: str | None = f"model {recall_case.model.key}: {exc}"
    else:
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


@pytest.fixture(scope="session")
def search_clients(request: pytest.FixtureRequest) -> Iterator[SearchClients]:
    clients = SearchClients(search_plan(request.config), request.config.getoption("judge_model"))
    yield clients
    clients.close()


def _fail_fast(config: pytest.Config, scorecard: Scorecard, subject: str) -> None:
    """Skip when ``subject`` (a model or an engine) had too many consecutive errors."""
    limit = config.getoption("max_consecutive_errors")
    count, last = run_state(config).consecutive_errors(subject)
    if limit and count >= limit:
        reason = (f"fail-fast: {count} consecutive infrastructure errors for {subject}; "
                  f"last: {last}")
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)


@pytest.fixture
def search_judged(
    request: pytest.FixtureRequest,
    search_case: SearchCase,
    search_clients: SearchClients,
    scorecard: Scorecard,
) -> dict:
    """Search one query on one engine, then judge every result: the case record."""
    config, plan = request.config, search_clients.plan
    query = search_case.query
    scorecard.open(
        "search", plan.pair(search_case.bench), plan.header(search_case.bench),
        case={"query_id": query.query_id, "query": query.query, "stratum": query.stratum,
              "engine": search_case.engine, "results": [], "search_error": None,
              "judge_errors": 0, "judge_requests": 0, "latency_s": None, "outcome": None},
    )
    subject = f"engine {search_case.engine}"
    _fail_fast(config, scorecard, subject)
    try:
        engine = search_clients.engine(search_case.engine)
    except MissingAPIKey as exc:
        reason = f"{exc.engine}: set {exc.env_var} to evaluate this engine"
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)
    outcome = search_clients.run(engine.search(query.query, num_results=plan.num_results))
    scorecard.update_case(latency_s=round(outcome.latency_s, 4))
    if outcome.error is not None:
        scorecard.update_case(search_error=outcome.error)
        run_state(config).note_error(subject, outcome.error)
        pytest.fail(f"search failed: {outcome.error}", pytrace=False)
    run_state(config).note_success(subject)
    today = row_day(query.row)  # the judge rates freshness as of the query's own hour
    try:
        judge = search_clients.judge
        before = judge.requests
        verdicts = search_clients.run(judge.rate_many(
            query.query, list(outcome.results), today=today, snippet_chars=plan.snippet_chars))
    except ConfigError as exc:
        reason = f"relevance judge not configured: {exc}"
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)
    profile = search_clients.run(judge.profile(query.query))  # made above; no new request
    results = [judged_result(result, verdict)
               for result, verdict in zip(outcome.results, verdicts, strict=True)]
    errors = [v for v in verdicts if isinstance(v, JudgeError)]
    scorecard.update_case(results=results, judge_errors=len(errors),
                          judge_requests=judge.requests - before,
                          query_profile=profile.as_dict() if profile else None)
    if errors:
        pytest.fail(f"judge failed on {len(errors)} of {len(results)} result(s): {errors[0]}",
                    pytrace=False)
    return scorecard.case
