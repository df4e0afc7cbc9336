"""Fixtures: the request lives here (setup), so infrastructure failures are pytest ERRORs.

``recall_answer`` sends one recall request, after two guards shared across xdist workers:
fail-fast (a model with N consecutive infrastructure errors is skipped) and a preflight (one
cheap request per (corpus, model) with the real prompt shape; when it fails, every case of
the pair errors with that one message instead of waiting out N timeouts). With a model's
``concurrency`` above 1 the dispatcher has sent the request ahead; the case still receives
its own answer or error here, in run order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from needle_lib.benches.known_item import (
    KnownItemBench,
    combined_rank,
    first_rank,
    needs_judging,
)
from needle_lib.benches.registry import bench_named
from needle_lib.benches.rows import row_day
from needle_lib.judge import JudgeError
from needle_lib.llm import ChatResult
from needle_lib.plugin.dispatch import RecallDispatcher
from needle_lib.plugin.recall import (
    RecallCase,
    RecallClients,
    ask,
    preflight,
    recall_case_of,
)
from needle_lib.plugin.resume import stored_answer
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.search import SearchCase, SearchClients, judged_result, matched_result
from needle_lib.plugin.session import recall_plan, run_state, search_plan, use_color
from needle_lib.plugin.shard import part_fields
from needle_lib.recall.results import EMPTY_CASE, answer_fields
from needle_lib.search.base import cap_snippet
from needle_lib.search.types import MissingAPIKey, SearchOutcome
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
                and stored_answer(config, case) is None]

    return RecallDispatcher(
        upcoming, lambda case: _tripped(config, f"model {case.model.key}") is None)


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
    scorecard.open(
        "recall", recall_case.pair,
        {**plan.header(recall_case), **part_fields(config, recall_case.pair)},
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
    scorecard.update_case(**answer_fields(result))
    return result


@pytest.fixture(scope="session")
def search_clients(request: pytest.FixtureRequest) -> Iterator[SearchClients]:
    clients = SearchClients(search_plan(request.config), request.config.getoption("judge_model"))
    yield clients
    clients.close()


def _tripped(config: pytest.Config, subject: str) -> str | None:
    """The fail-fast reason when ``subject`` (a model or an engine) had too many
    consecutive errors, else None."""
    limit = config.getoption("max_consecutive_errors")
    count, last = run_state(config).consecutive_errors(subject)
    if limit and count >= limit:
        return f"fail-fast: {count} consecutive infrastructure errors for {subject}; last: {last}"
    return None


def _fail_fast(config: pytest.Config, scorecard: Scorecard, subject: str) -> None:
    """Skip the case when fail-fast has tripped for ``subject``."""
    reason = _tripped(config, subject)
    if reason is not None:
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)


def _search(request: pytest.FixtureRequest, search_case: SearchCase,
            search_clients: SearchClients, scorecard: Scorecard,
            **case_fields: Any) -> SearchOutcome:
    """Open the case record and search (the infrastructure part every search bench shares):
    a missing key SKIPs, a failed search is an ERROR counted toward fail-fast."""
    config, plan = request.config, search_clients.plan
    query = search_case.query
    scorecard.open(
        "search", plan.pair(search_case.bench), plan.header(search_case.bench),
        case={"query_id": query.query_id, "query": query.query, "stratum": query.stratum,
              "engine": search_case.engine, "results": [], "search_error": None,
              "judge_errors": 0, "judge_requests": 0, "latency_s": None, "retries": 0,
              "outcome": None, **case_fields},
    )
    subject = f"engine {search_case.engine}"
    _fail_fast(config, scorecard, subject)
    try:
        engine = search_clients.engine(search_case.engine)
    except MissingAPIKey as exc:
        reason = f"{exc.engine}: set {exc.env_var} to evaluate this engine"
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)
    top_k = plan.results_for(search_case.bench)
    outcome = search_clients.run(engine.search(query.query, num_results=top_k))
    scorecard.update_case(latency_s=round(outcome.latency_s, 4), retries=outcome.retries,
                          malformed_results=outcome.malformed)
    if outcome.error is not None:
        scorecard.update_case(search_error=outcome.error)
        run_state(config).note_error(subject, outcome.error)
        pytest.fail(f"search failed: {outcome.error}", pytrace=False)
    run_state(config).note_success(subject)
    return outcome


@pytest.fixture
def search_judged(
    request: pytest.FixtureRequest,
    search_case: SearchCase,
    search_clients: SearchClients,
    scorecard: Scorecard,
) -> dict:
    """Search one query on one engine, then judge every result: the case record."""
    outcome = _search(request, search_case, search_clients, scorecard)
    query = search_case.query
    today = row_day(query.row)  # the judge rates freshness as of the query's own hour
    try:
        judge = search_clients.judge
        before = judge.requests
        verdicts = search_clients.run(judge.rate_many(
            query.query, list(outcome.results), today=today,
            snippet_chars=search_clients.plan.snippet_chars))
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


@pytest.fixture
def search_matched(
    request: pytest.FixtureRequest,
    search_case: SearchCase,
    search_clients: SearchClients,
    scorecard: Scorecard,
) -> dict:
    """Search one known-item query on one engine and find the gold in its results.

    With ``--judge`` the backstop judges the results ranked above the first deterministic
    hit; a miss it could not decide (judge errors, no hit) is an ERROR: not a quality result.
    """
    bench = bench_named(search_case.bench)
    assert isinstance(bench, KnownItemBench)
    query = search_case.query
    gold = bench.parse_gold(query.gold)  # validated at collection
    outcome = _search(request, search_case, search_clients, scorecard,
                      gold=query.gold, gold_text=bench.describe(gold),
                      groups=bench.groups(query.row, gold), det_rank=None, hit_rank=None,
                      judged=0)
    shown = [cap_snippet(r, search_clients.plan.snippet_chars) for r in outcome.results]
    matches = [bench.match(gold, result) for result in shown]
    results = [matched_result(r, m) for r, m in zip(shown, matches, strict=True)]
    det_rank = first_rank([m.matched for m in matches])
    scorecard.update_case(results=results, det_rank=det_rank, hit_rank=det_rank)
    if not (search_clients.plan.answer_judge and bench.judge_backstop):
        return scorecard.case
    ask = shown[: needs_judging(det_rank, len(results))]
    try:
        judge = search_clients.answer_judge
    except ConfigError as exc:
        reason = f"--judge: judge model not configured: {exc}"
        scorecard.update_case(skip_reason=reason)
        pytest.skip(reason)
    before = judge.requests
    verdicts = search_clients.run(judge.decide_many(query.query, bench.judge_context(gold), ask))
    for result, verdict in zip(results, verdicts, strict=False):
        result["judge_match"] = verdict if isinstance(verdict, bool) else None
    errors = [v for v in verdicts if isinstance(v, JudgeError)]
    hit_rank = combined_rank(det_rank, [v is True for v in verdicts])
    scorecard.update_case(results=results, hit_rank=hit_rank, judged=len(ask),
                          judge_errors=len(errors), judge_requests=judge.requests - before)
    if errors and hit_rank is None:
        pytest.fail(f"judge failed on {len(errors)} of {len(ask)} result(s) and nothing "
                    f"matched, so this miss is undecided: {errors[0]}", pytrace=False)
    return scorecard.case
