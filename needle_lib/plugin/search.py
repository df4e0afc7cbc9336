"""The search half of the plugin: fixtures (the search and the judging live here, in setup,
so infrastructure failures are pytest ERRORs, as for recall in ``fixtures``) and the
verdicts the eval modules assert (``check_relevance``, ``check_hit``).

The plugin registers this module only for a run with a query set (``--queries``): without
one no search case exists, and a recall run never imports the search half.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest

from needle_lib.benches.dispatch import SearchDispatcher
from needle_lib.benches.fetch import CaseWork, JudgedWork, MatchedWork
from needle_lib.benches.known_item import KnownItemBench, combined_rank, first_rank
from needle_lib.benches.plan import SearchCase, SearchClients, judged_result, matched_result
from needle_lib.benches.registry import bench_named
from needle_lib.contract.records import (
    BenchCaseRecord,
    JudgedCaseRecord,
    KnownItemCaseRecord,
    SearchCaseRecord,
    judged_case_record,
    known_item_case_record,
)
from needle_lib.judge.answer import says_yes
from needle_lib.judge.base import JudgeSeen
from needle_lib.judge.verdict import RELEVANT_RATING, JudgeError
from needle_lib.net.slots import CallSlots
from needle_lib.plugin.collect import search_case_of, search_plan
from needle_lib.plugin.fixtures import fail_fast, tripped
from needle_lib.plugin.resume import is_kept, resumed_from, stored_case
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.settings import is_worker, run_state, settings
from needle_lib.plugin.shard import SCATTERING, run_dist


@pytest.fixture(scope="session")
def search_clients(request: pytest.FixtureRequest) -> Iterator[SearchClients]:
    config = request.config
    plan = search_plan(config)
    # one bound on judge calls for the whole run: every worker holds slots in the run dir
    slots = CallSlots(plan.judge_concurrency, run_state(config).path.parent, name="judge")
    clients = SearchClients(plan, settings(config).judge_model, slots)
    yield clients
    clients.close()


@pytest.fixture(scope="session")
def search_dispatcher(request: pytest.FixtureRequest,
                      search_clients: SearchClients) -> SearchDispatcher:
    config, session = request.config, request.session

    def upcoming() -> list[SearchCase]:
        # session.items is this process's run order; under xdist, --dist loadgroup (the
        # search default) keeps an engine's cases on one worker.
        cases = (search_case_of(item) for item in session.items)
        # a case kept by --resume is never sent to a lane
        return [case for case in cases if case is not None and not is_kept(config, case)]

    lookahead = settings(config).search_lookahead
    if run_dist(config) in SCATTERING:
        lookahead = 1  # this worker may not run an engine's next cases: fetch none ahead
    return SearchDispatcher(
        search_clients, upcoming,
        lambda case: tripped(config, f"engine {case.engine}") is None, lookahead,
        all_at_once=not is_worker(config))


def _search(request: pytest.FixtureRequest, search_case: SearchCase,
            search_dispatcher: SearchDispatcher, scorecard: Scorecard,
            case: BenchCaseRecord) -> CaseWork | None:
    """Open the case record with ``case`` and take the case's work (searched, and judged,
    ahead or now): the infrastructure part every search bench shares. A missing key SKIPs,
    a failed search is an ERROR counted toward fail-fast, in run order as in a serial run.
    None: the case was answered by the run ``--resume`` continues, and its record is that
    run's."""
    config = request.config
    plan = search_plan(config)
    header = plan.header(search_case.bench)  # a fresh dict per call
    if (resumed := resumed_from(config, search_case.bench)) is not None:
        header["resumed_from"] = resumed
    scorecard.open_search(plan.pair(search_case.bench), header, case)
    kept = stored_case(config, search_case)
    if kept is not None:
        _take_kept(case, kept)
        return None
    subject = f"engine {search_case.engine}"
    fail_fast(config, scorecard, subject)
    work = search_dispatcher.work(search_case)
    missing = work.searched.missing_key
    if missing is not None:
        reason = f"{missing.engine}: set {missing.env_var} to evaluate this engine"
        case["skip_reason"] = reason
        pytest.skip(reason)
    outcome = work.searched.outcome
    assert outcome is not None  # searched, or the key was missing
    case["latency_s"] = round(outcome.latency_s, 4)
    case["retries"] = outcome.retries
    case["malformed_results"] = outcome.malformed
    if outcome.error is not None:
        case["search_error"] = outcome.error
        run_state(config).note_error(subject, outcome.error)
        pytest.fail(f"search failed: {outcome.error}", pytrace=False)
    run_state(config).note_success(subject)
    return work


def _take_kept(case: BenchCaseRecord, kept: SearchCaseRecord) -> None:
    """``case`` becomes the one the resumed run answered: its fields over these (a kept
    case is of this bench: the store is keyed by bench), then ``resumed``."""
    if "hit_rank" in case:
        case.update(cast(KnownItemCaseRecord, kept))
    else:
        case.update(cast(JudgedCaseRecord, kept))
    case["resumed"] = True


def _note_judge_seen(case: BenchCaseRecord, seen: JudgeSeen) -> None:
    case["judge_served_model"] = seen["judge_served_model"]
    case["judge_output"] = seen["judge_output"]


@pytest.fixture
def search_judged(
    request: pytest.FixtureRequest,
    search_case: SearchCase,
    search_dispatcher: SearchDispatcher,
    scorecard: Scorecard,
) -> JudgedCaseRecord:
    """Search one query on one engine, then judge every result: the case record."""
    query = search_case.query
    case = judged_case_record(query_id=query.query_id, query=query.query,
                              stratum=query.stratum, engine=search_case.engine)
    work = _search(request, search_case, search_dispatcher, scorecard, case)
    if work is None:
        return case
    assert isinstance(work, JudgedWork)
    if work.unconfigured is not None:
        reason = f"relevance judge not configured: {work.unconfigured}"
        case["skip_reason"] = reason
        pytest.skip(reason)
    assert work.searched.outcome is not None
    verdicts, profile = work.verdicts, work.profile
    results = [judged_result(result, verdict)
               for result, verdict in zip(work.searched.outcome.results, verdicts, strict=True)]
    errors = [v for v in verdicts if isinstance(v, JudgeError)]
    case["results"] = results
    case["judge_errors"] = len(errors)
    case["judge_requests"] = work.judge_requests
    case["query_profile"] = profile.as_dict() if profile else None
    case["judge_today"] = work.today.isoformat() if work.today else None
    _note_judge_seen(case, work.seen)
    if errors:
        pytest.fail(f"judge failed on {len(errors)} of {len(results)} result(s): {errors[0]}",
                    pytrace=False)
    return case


@pytest.fixture
def search_matched(
    request: pytest.FixtureRequest,
    search_case: SearchCase,
    search_dispatcher: SearchDispatcher,
    scorecard: Scorecard,
) -> KnownItemCaseRecord:
    """Search one known-item query on one engine and find the gold in its results.

    With ``--judge`` the backstop judges the results ranked above the first deterministic
    hit; a miss it could not decide (judge errors, no hit) is an ERROR: not a quality result.
    """
    bench = bench_named(search_case.bench)
    assert isinstance(bench, KnownItemBench)
    query = search_case.query
    gold = bench.parse_gold(query.gold)  # validated at collection
    case = known_item_case_record(
        query_id=query.query_id, query=query.query, stratum=query.stratum,
        engine=search_case.engine, gold=query.gold, gold_text=bench.describe(gold),
        groups=bench.groups(query.row, gold))
    work = _search(request, search_case, search_dispatcher, scorecard, case)
    if work is None:
        return case
    assert isinstance(work, MatchedWork)
    results = [matched_result(r, m) for r, m in zip(work.shown, work.matches, strict=True)]
    det_rank = first_rank([m.matched for m in work.matches])
    case["results"] = results
    case["det_rank"] = case["hit_rank"] = det_rank
    if work.unconfigured is not None:
        reason = f"--judge: judge model not configured: {work.unconfigured}"
        case["skip_reason"] = reason
        pytest.skip(reason)
    if work.answers is None:
        return case
    verdicts = work.answers
    said = [says_yes(verdict) for verdict in verdicts]
    for result, yes in zip(results, said, strict=False):
        result["judge_match"] = yes
    errors = [v for v in verdicts if isinstance(v, JudgeError)]
    hit_rank = combined_rank(det_rank, [yes is True for yes in said])
    case["hit_rank"] = hit_rank
    case["judged"] = work.asked
    case["judge_errors"] = len(errors)
    case["judge_requests"] = work.judge_requests
    _note_judge_seen(case, work.seen)
    if errors and hit_rank is None:
        pytest.fail(f"judge failed on {len(errors)} of {work.asked} result(s) and nothing "
                    f"matched, so this miss is undecided: {errors[0]}", pytrace=False)
    return case


def check_relevance(case: JudgedCaseRecord, scorecard: Scorecard) -> None:
    """The per-case verdict: did the engine put at least one relevant result in its top K?

    The headline metric (pooled nDCG) needs every engine's results and is computed in the
    run report; this per-case check is what makes a case PASSED or FAILED in pytest.
    """
    ratings = [r.get("rating") for r in case["results"]]
    best = max((rating for rating in ratings if rating is not None), default=0)
    summary = (f"{case['engine']} on {case['query']!r}: ratings {ratings} "
               f"(best {best}; relevant means ≥ {RELEVANT_RATING})")
    scorecard.search_case["verdict"] = summary
    if best < RELEVANT_RATING:
        pytest.fail(summary, pytrace=False)


def check_hit(case: KnownItemCaseRecord, scorecard: Scorecard) -> None:
    """The known-item verdict: PASSED when the gold is in the top K; a miss shows the gold,
    what the engine returned and why none of it matched."""
    rank = case["hit_rank"]
    if rank is not None:
        how = "judge" if rank != case["det_rank"] else "matcher"
        scorecard.search_case["verdict"] = f"hit at rank {rank} ({how})"
        return
    lines = [f"{case['engine']} on {case['query']!r}: gold not among its "
             f"{len(case['results'])} result(s)", f"  gold: {case['gold_text']}"]
    for rank, result in enumerate(case["results"], start=1):
        judge_match = result.get("judge_match")
        judged = "" if judge_match is None else f"; judge: {judge_match}"
        lines.append(f"  {rank}. {result['title'][:80]!r} {result['url']}")
        lines.append(f"     {result.get('match_why')}{judged}")
    if not case["results"]:
        lines.append("  (no results)")
    message = "\n".join(lines)
    scorecard.search_case["verdict"] = lines[0]
    pytest.fail(message, pytrace=False)
