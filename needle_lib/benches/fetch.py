"""The requests of one search case: its search, then its judging, as one async job.

A job runs on the worker's event loop, possibly well ahead of pytest reaching the case
(``benches.dispatch``); it only asks and collects. Everything that depends on run order —
the case record, fail-fast bookkeeping, SKIP/ERROR/FAILED — stays in the fixtures, so a
pipelined run records exactly what a serial one does. The search holds its engine's lane
(one request in flight per engine, so latency samples stay comparable); judging does not,
so the engine's next search starts while this one's results are being judged.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import date

from needle_lib.benches.known_item import KnownItemBench, Match, first_rank, needs_judging
from needle_lib.benches.plan import SearchCase, SearchClients
from needle_lib.benches.registry import bench_named
from needle_lib.benches.rows import row_day
from needle_lib.judge.base import JudgeSeen, seen_in, unseen
from needle_lib.judge.profile import QueryProfile
from needle_lib.judge.tally import counting
from needle_lib.judge.verdict import JudgeError, Verdict
from needle_lib.search.bounds import cap_snippet
from needle_lib.search.types import MissingAPIKey, SearchOutcome, SearchResult
from needle_lib.tomlconf import ConfigError


@dataclass(frozen=True)
class Searched:
    """The engine's outcome, or the missing key that keeps the case from running."""

    outcome: SearchOutcome | None = None
    missing_key: MissingAPIKey | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is not None and self.outcome.error is None


@dataclass(frozen=True)
class JudgedWork:
    """A judged case's answers: one verdict (or judge error) per result, in order."""

    searched: Searched
    verdicts: list[Verdict | JudgeError] = field(default_factory=list)
    profile: QueryProfile | None = None
    #: judge calls this case made (a call shared with another case counts for its maker)
    judge_requests: int = 0
    #: the judge could not be built (no key, unknown model): the case is SKIPPED
    unconfigured: ConfigError | None = None
    #: the date freshness was judged against (the row's day, else the judge's today)
    today: date | None = None
    #: who answered the verdicts it used (``judge.base.seen_in``), not the process's judge
    seen: JudgeSeen = field(default_factory=unseen)


@dataclass(frozen=True)
class MatchedWork:
    """A known-item case's answers: the results as shown, the matcher's verdicts, and with
    ``--judge`` the backstop's verdicts on the first ``asked`` results (None: not asked)."""

    searched: Searched
    shown: list[SearchResult] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    answers: list[Verdict | JudgeError] | None = None
    asked: int = 0
    judge_requests: int = 0
    unconfigured: ConfigError | None = None
    seen: JudgeSeen = field(default_factory=unseen)


CaseWork = JudgedWork | MatchedWork


async def search_in_lane(clients: SearchClients, case: SearchCase,
                         lane: asyncio.Lock) -> Searched:
    try:
        engine = clients.engine(case.engine)
    except MissingAPIKey as exc:
        return Searched(missing_key=exc)
    async with lane:
        outcome = await engine.search(case.query.query,
                                      num_results=clients.plan.results_for(case.bench))
    return Searched(outcome)


async def fetch_judged(clients: SearchClients, case: SearchCase,
                       lane: asyncio.Lock) -> JudgedWork:
    searched = await search_in_lane(clients, case, lane)
    if not searched.ok:
        return JudgedWork(searched)
    assert searched.outcome is not None
    query = case.query
    with counting() as tally:
        try:
            judge = clients.judge
            # freshness as of the query's own hour, else as of the judge's (pinnable) today
            today = row_day(query.row) or judge.today()
            verdicts = await judge.rate_many(
                query.query, list(searched.outcome.results), today=today,
                snippet_chars=clients.plan.snippet_chars)
        except ConfigError as exc:
            return JudgedWork(searched, unconfigured=exc)
        profile = await judge.profile(query.query)  # made above; no new request
    return JudgedWork(searched, verdicts, profile, tally.requests, today=today,
                      seen=seen_in(verdicts))


async def fetch_matched(clients: SearchClients, case: SearchCase,
                        lane: asyncio.Lock) -> MatchedWork:
    bench = bench_named(case.bench)
    assert isinstance(bench, KnownItemBench)
    gold = bench.parse_gold(case.query.gold)  # validated at collection
    searched = await search_in_lane(clients, case, lane)
    if not searched.ok:
        return MatchedWork(searched)
    assert searched.outcome is not None
    shown = [cap_snippet(r, clients.plan.snippet_chars) for r in searched.outcome.results]
    matches = [bench.match(gold, result) for result in shown]
    if not (clients.plan.answer_judge and bench.judge_backstop):
        return MatchedWork(searched, shown, matches)
    ask = shown[: needs_judging(first_rank([m.matched for m in matches]), len(shown))]
    with counting() as tally:
        try:
            judge = clients.answer_judge
        except ConfigError as exc:
            return MatchedWork(searched, shown, matches, unconfigured=exc)
        answers = await judge.decide_many(case.query.query, bench.judge_context(gold), ask)
    return MatchedWork(searched, shown, matches, answers, len(ask), tally.requests,
                       seen=seen_in(answers))
