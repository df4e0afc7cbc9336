"""The fixtures that run a case, the same way for every benchmark (``settle``), and the
recall ones; the search ones are in ``plugin.search``, registered only with a query set.

A case's benchmark (``kernel.benchmark.Benchmark``) opens its record, asks and scores in
the case's *setup*, so a failure to answer (a server down, a missing key, a preflight that
does not fit) is a pytest ERROR or SKIP; the test body only asserts the verdict
(``assert_verdict``), so a quality miss is a FAILED with its evidence as the message.
Before asking, two guards shared across xdist workers: a case answered by the run
``--resume`` continues is not asked again, and fail-fast skips a subject (a model, an
engine) after N consecutive infrastructure errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from needle_lib.contract.outcome import Outcome
from needle_lib.kernel.benchmark import Benchmark, CaseVerdict
from needle_lib.plugin.collect import recall_case_of, recall_plan
from needle_lib.plugin.resume import is_kept, kept_case
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.settings import run_state, settings, use_color
from needle_lib.plugin.shard import part_shard
from needle_lib.recall.benchmark import RecallBenchmark, model_subject
from needle_lib.recall.dispatch import RecallDispatcher
from needle_lib.recall.plan import RecallCase, RecallClients

if TYPE_CHECKING:
    from needle_lib.benches.plan import SearchCase

CaseT = TypeVar("CaseT", bound="RecallCase | SearchCase")


@pytest.fixture
def scorecard(request: pytest.FixtureRequest) -> Scorecard:
    return Scorecard(request.node)


def settle(config: pytest.Config, benchmark: Benchmark[CaseT, Any, Any, Any, Any, Any],
           case: CaseT, scorecard: Scorecard) -> CaseVerdict:
    """Run ``case`` through its benchmark up to its verdict, in setup: SKIPPED and ERROR
    are raised here; PASSED and FAILED are the test body's to assert."""
    record = benchmark.record(case)
    scorecard.open(record)
    kept = kept_case(config, case)
    if kept is not None:
        verdict = benchmark.resume(case, record, kept)
    else:
        subject = benchmark.subject(case)
        fail_fast(config, scorecard, subject)
        verdict = benchmark.score(case, benchmark.ask(case), record)
        state = run_state(config)
        if verdict.answered is True:
            state.note_success(subject)
        elif verdict.answered is False:
            state.note_error(subject, verdict.message)
    if verdict.outcome is Outcome.SKIPPED:
        pytest.skip(verdict.message)
    if verdict.outcome is Outcome.ERROR:
        pytest.fail(verdict.message, pytrace=False)
    record["decided"] = verdict.outcome.value  # the controller settles the case with it
    return verdict


def assert_verdict(verdict: CaseVerdict) -> None:
    """The test body of every eval module: a FAILED with the benchmark's evidence (a
    coloured line diff, the results and why none matched), else a pass."""
    if verdict.outcome is Outcome.FAILED:
        pytest.fail(verdict.message, pytrace=False)


@pytest.fixture(scope="session")
def recall_benchmark(request: pytest.FixtureRequest) -> Iterator[RecallBenchmark]:
    config, session = request.config, request.session

    def upcoming(pair: str) -> list[RecallCase]:
        # session.items is this process's run order; under xdist, --dist loadgroup (forced
        # with --concurrency) keeps a pair's cases on one worker.
        cases = (recall_case_of(item) for item in session.items)
        return [case for case in cases if case is not None and case.pair == pair
                and not is_kept(config, case)]

    dispatcher = RecallDispatcher(
        upcoming, lambda case: tripped(config, model_subject(case)) is None)
    clients = RecallClients()
    yield RecallBenchmark(recall_plan(config), clients, dispatcher, run_state(config),
                          shard_of=lambda pair: part_shard(config, pair),
                          color=use_color(config))
    clients.close()


@pytest.fixture
def recall_verdict(request: pytest.FixtureRequest, recall_case: RecallCase,
                   recall_benchmark: RecallBenchmark, scorecard: Scorecard) -> CaseVerdict:
    """One recall case asked and scored: its verdict."""
    return settle(request.config, recall_benchmark, recall_case, scorecard)


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
        scorecard.case["skip_reason"] = reason
        pytest.skip(reason)
