"""The search benches as ``kernel.benchmark.Benchmark``s: one query on one engine a case,
its results judged for relevance (``JudgedBenchmark``: news, agentic_rare) or matched
against a known answer (``KnownItemBenchmark``: finance, scholar, legal).

Asking is the dispatcher's (``benches.dispatch``: every engine's lane at once, judging
pipelined), done ahead of the case; scoring here happens in run order, so a pipelined run
records what a serial one does. A missing key SKIPs, a failed search is an ERROR counted
toward the engine's fail-fast, a judge that could not be made SKIPs, and judge errors that
leave the verdict undecided are an ERROR that is not the engine's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from needle_lib.benches.dispatch import SearchDispatcher
from needle_lib.benches.fetch import CaseWork, JudgedWork, MatchedWork
from needle_lib.benches.known_item import KnownItemBench, combined_rank, first_rank
from needle_lib.benches.plan import SearchCase, SearchPlan, judged_result, matched_result
from needle_lib.benches.registry import bench_named
from needle_lib.benches.runfiles import assemble_report
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import (
    BenchCaseRecord,
    JudgedCaseRecord,
    JudgedRecord,
    KnownItemCaseRecord,
    KnownItemRecord,
    SearchCaseRecord,
    judged_case_record,
    known_item_case_record,
)
from needle_lib.contract.report import SearchReport
from needle_lib.contract.schema import ResumedFromRecord, SearchHeaderRecord
from needle_lib.judge.answer import says_yes
from needle_lib.judge.base import JudgeSeen
from needle_lib.judge.verdict import RELEVANT_RATING, JudgeError
from needle_lib.kernel.benchmark import CaseVerdict

#: The run ``--resume`` continues for a bench, which its header records.
ResumedFrom = Callable[[str], ResumedFromRecord | None]
RecordT = TypeVar("RecordT", JudgedRecord, KnownItemRecord)


def engine_subject(case: SearchCase) -> str:
    """Who answers a search case, for fail-fast: its engine."""
    return f"engine {case.engine}"


class SearchBenchmark(ABC, Generic[RecordT]):
    """What every search bench shares: the cases of one bench of the plan, the search, the
    resume and the fold. A bench kind adds its record, how it takes the search's answers,
    and its verdict."""

    def __init__(self, plan: SearchPlan, bench: str, dispatcher: SearchDispatcher,
                 resumed_from: ResumedFrom) -> None:
        self.plan = plan
        self.bench = bench
        self.dispatcher = dispatcher
        self.resumed_from = resumed_from

    def cases(self) -> list[SearchCase]:
        return self.plan.cases(self.bench)

    def subject(self, case: SearchCase) -> str:
        return engine_subject(case)

    def record(self, case: SearchCase) -> RecordT:
        header = self.plan.header(case.bench)  # a fresh dict per call
        if (resumed := self.resumed_from(case.bench)) is not None:
            header["resumed_from"] = resumed
        return self.open(case, self.plan.pair(case.bench), header)

    @abstractmethod
    def open(self, case: SearchCase, pair: str, header: SearchHeaderRecord) -> RecordT:
        """The case's record before it is run: its identity, counters at zero."""

    def resume(self, case: SearchCase, record: RecordT, kept: SearchCaseRecord) -> CaseVerdict:
        """The record the resumed run stored (a kept case is of this bench: the store is
        keyed by bench), then ``resumed``; its verdict is decided again from it."""
        record["case"].update(kept)
        record["case"]["resumed"] = True
        return self.verdict(record, answered=None)

    def ask(self, case: SearchCase) -> CaseWork:
        return self.dispatcher.work(case)

    def score(self, case: SearchCase, answer: CaseWork, record: RecordT) -> CaseVerdict:
        stored = record["case"]
        missing = answer.searched.missing_key
        if missing is not None:
            reason = f"{missing.engine}: set {missing.env_var} to evaluate this engine"
            stored["skip_reason"] = reason
            return CaseVerdict(Outcome.SKIPPED, reason)
        outcome = answer.searched.outcome
        assert outcome is not None  # searched, or the key was missing
        stored["latency_s"] = round(outcome.latency_s, 4)
        stored["retries"] = outcome.retries
        stored["malformed_results"] = outcome.malformed
        if outcome.error is not None:
            stored["search_error"] = outcome.error
            return CaseVerdict(Outcome.ERROR, f"search failed: {outcome.error}",
                               answered=False)
        halted = self.take(answer, record)
        return halted if halted is not None else self.verdict(record, answered=True)

    @abstractmethod
    def take(self, work: CaseWork, record: RecordT) -> CaseVerdict | None:
        """Put the searched case's results and their verdicts into ``record``; the SKIP or
        ERROR (the engine answered) when the judge leaves the case undecided."""

    @abstractmethod
    def verdict(self, record: RecordT, *, answered: bool | None) -> CaseVerdict:
        """PASSED or FAILED, from the record alone (a resumed case's too); the one-line
        summary goes into the case's ``verdict``."""

    def fold(self, header: SearchHeaderRecord, records: Iterable[BenchCaseRecord], *,
             in_progress: bool) -> SearchReport:
        return assemble_report(header, list(records), complete_run=not in_progress)


def _note_judge_seen(stored: JudgedCaseRecord | KnownItemCaseRecord, seen: JudgeSeen) -> None:
    stored["judge_served_model"] = seen["judge_served_model"]
    stored["judge_output"] = seen["judge_output"]


class JudgedBenchmark(SearchBenchmark[JudgedRecord]):
    """A relevance-judged bench: every result rated; the case passes with a relevant result
    in the top K (the headline, pooled nDCG, needs every engine and is the report's)."""

    def open(self, case: SearchCase, pair: str, header: SearchHeaderRecord) -> JudgedRecord:
        query = case.query
        return JudgedRecord(kind="judged", pair=pair, header=header, case=judged_case_record(
            query_id=query.query_id, query=query.query, stratum=query.stratum,
            engine=case.engine))

    def take(self, work: CaseWork, record: JudgedRecord) -> CaseVerdict | None:
        assert isinstance(work, JudgedWork) and work.searched.outcome is not None
        judged = record["case"]
        if work.unconfigured is not None:
            reason = f"relevance judge not configured: {work.unconfigured}"
            judged["skip_reason"] = reason
            return CaseVerdict(Outcome.SKIPPED, reason, answered=True)
        verdicts = work.verdicts
        results = [judged_result(result, verdict) for result, verdict
                   in zip(work.searched.outcome.results, verdicts, strict=True)]
        errors = [v for v in verdicts if isinstance(v, JudgeError)]
        judged["results"] = results
        judged["judge_errors"] = len(errors)
        judged["judge_requests"] = work.judge_requests
        judged["query_profile"] = work.profile.as_dict() if work.profile else None
        judged["judge_today"] = work.today.isoformat() if work.today else None
        _note_judge_seen(judged, work.seen)
        if errors:
            return CaseVerdict(Outcome.ERROR, f"judge failed on {len(errors)} of "
                               f"{len(results)} result(s): {errors[0]}", answered=True)
        return None

    def verdict(self, record: JudgedRecord, *, answered: bool | None) -> CaseVerdict:
        stored = record["case"]
        ratings = [r.get("rating") for r in stored["results"]]
        best = max((rating for rating in ratings if rating is not None), default=0)
        summary = (f"{stored['engine']} on {stored['query']!r}: ratings {ratings} "
                   f"(best {best}; relevant means ≥ {RELEVANT_RATING})")
        stored["verdict"] = summary
        if best < RELEVANT_RATING:
            return CaseVerdict(Outcome.FAILED, summary, answered)
        return CaseVerdict(Outcome.PASSED, answered=answered)


class KnownItemBenchmark(SearchBenchmark[KnownItemRecord]):
    """A known-item bench: the case passes when the gold is in the engine's top K. With
    ``--judge`` the LLM backstop judges the results ranked above the first deterministic
    hit; a miss it could not decide (judge errors, no hit) is an ERROR, not a quality
    result."""

    def __init__(self, plan: SearchPlan, bench: str, dispatcher: SearchDispatcher,
                 resumed_from: ResumedFrom) -> None:
        super().__init__(plan, bench, dispatcher, resumed_from)
        known = bench_named(bench)
        assert isinstance(known, KnownItemBench)
        self.known = known

    def open(self, case: SearchCase, pair: str, header: SearchHeaderRecord) -> KnownItemRecord:
        query = case.query
        gold = self.known.parse_gold(query.gold)  # validated at collection
        return KnownItemRecord(kind="known_item", pair=pair, header=header,
                               case=known_item_case_record(
            query_id=query.query_id, query=query.query, stratum=query.stratum,
            engine=case.engine, gold=query.gold, gold_text=self.known.describe(gold),
            groups=self.known.groups(query.row, gold)))

    def take(self, work: CaseWork, record: KnownItemRecord) -> CaseVerdict | None:
        assert isinstance(work, MatchedWork)
        case = record["case"]
        results = [matched_result(r, m) for r, m in zip(work.shown, work.matches, strict=True)]
        det_rank = first_rank([m.matched for m in work.matches])
        case["results"] = results
        case["det_rank"] = case["hit_rank"] = det_rank
        if work.unconfigured is not None:
            reason = f"--judge: judge model not configured: {work.unconfigured}"
            case["skip_reason"] = reason
            return CaseVerdict(Outcome.SKIPPED, reason, answered=True)
        if work.answers is None:
            return None
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
            return CaseVerdict(Outcome.ERROR, f"judge failed on {len(errors)} of {work.asked} "
                               f"result(s) and nothing matched, so this miss is undecided: "
                               f"{errors[0]}", answered=True)
        return None

    def verdict(self, record: KnownItemRecord, *, answered: bool | None) -> CaseVerdict:
        """A miss shows the gold, what the engine returned and why none of it matched."""
        case = record["case"]
        rank = case["hit_rank"]
        if rank is not None:
            how = "judge" if rank != case["det_rank"] else "matcher"
            case["verdict"] = f"hit at rank {rank} ({how})"
            return CaseVerdict(Outcome.PASSED, answered=answered)
        lines = [f"{case['engine']} on {case['query']!r}: gold not among its "
                 f"{len(case['results'])} result(s)", f"  gold: {case['gold_text']}"]
        for place, result in enumerate(case["results"], start=1):
            judge_match = result.get("judge_match")
            judged = "" if judge_match is None else f"; judge: {judge_match}"
            lines.append(f"  {place}. {result['title'][:80]!r} {result['url']}")
            lines.append(f"     {result.get('match_why')}{judged}")
        if not case["results"]:
            lines.append("  (no results)")
        case["verdict"] = lines[0]
        return CaseVerdict(Outcome.FAILED, "\n".join(lines), answered)


AnySearchBenchmark = JudgedBenchmark | KnownItemBenchmark


class SearchBenchmarks:
    """The benchmark of each bench a run asks, made at its first case: a bench the run does
    not ask is never imported (a news run loads no known-item matcher, nor the optional
    libraries some of them use)."""

    def __init__(self, plan: SearchPlan, dispatcher: SearchDispatcher,
                 resumed_from: ResumedFrom) -> None:
        self.plan = plan
        self.dispatcher = dispatcher
        self.resumed_from = resumed_from
        self._made: dict[str, AnySearchBenchmark] = {}

    def of(self, bench: str) -> AnySearchBenchmark:
        """``bench``'s benchmark, by its kind."""
        if bench not in self._made:
            kind = JudgedBenchmark if bench_named(bench).kind == "judged" else KnownItemBenchmark
            self._made[bench] = kind(self.plan, bench, self.dispatcher, self.resumed_from)
        return self._made[bench]
