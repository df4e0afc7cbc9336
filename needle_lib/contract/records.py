"""Typed records that cross module boundaries: a case's record and the recall dump. JSON on
disk is their serialisation (xdist ships records as plain dicts, so these are TypedDicts,
not classes); each is built in one place: cases by :func:`recall_case_record` /
:func:`search_case_record` here, dumps by ``recall.results.new_dump``. The search report is
a Struct of its own (``contract.report``).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from needle_lib.contract.outcome import Outcome


class RecallCaseRecord(TypedDict):
    """One recall case in a dump. Every key is present; what does not apply is null (an
    errored case has no score, a scored one no error)."""

    function: str
    case_id: str
    file: str
    start_line: int
    signature: str
    prompt_tokens_est: int | None
    #: How the served prompt size was read (``llm.truncation.PromptCount``): cached tokens
    #: counted, or a prefix-cache hit told from a truncation.
    prompt_count: str | None
    outcome: Outcome | None
    #: The score (``recall.score.Score``): lines matched of lines scored under the policy.
    matched: int | None
    scored: int | None
    ratio: float | None
    passed: bool | None
    hallucinated: int | None
    reindented: int | None
    bonus: int | None
    missing: int | None
    composition: dict[str, Any] | None
    #: The answer as the server sent it, up to ``recall.results.STORED_ANSWER_CHARS``
    #: characters (``recall.results.answer_fields``).
    response: str | None
    reasoning: str | None
    finish_reason: str | None
    latency_s: float | None
    usage: dict[str, Any] | None
    timings: dict[str, Any] | None
    served_model: str | None
    attempts: int | None
    error: str | None
    skip_reason: str | None
    requested_at: NotRequired[float]
    resumed: NotRequired[bool]
    #: Set when the answer or reasoning was longer than ``recall.results.STORED_ANSWER_CHARS``:
    #: each cut field's full length in characters (the stored head is what was scored).
    answer_cut: NotRequired[dict[str, int]]


def recall_case_record(*, function: str, case_id: str, file: str, start_line: int, signature: str,
                prompt_tokens_est: int | None) -> RecallCaseRecord:
    """A recall case before it is asked: its identity, every other field null."""
    return RecallCaseRecord(
        function=function, case_id=case_id, file=file, start_line=start_line,
        signature=signature, prompt_tokens_est=prompt_tokens_est, prompt_count=None, outcome=None,
        matched=None, scored=None, ratio=None, passed=None, hallucinated=None,
        reindented=None, bonus=None, missing=None, composition=None, response=None,
        reasoning=None, finish_reason=None, latency_s=None, usage=None, timings=None,
        served_model=None, attempts=None, error=None, skip_reason=None)


class SearchResultRecord(TypedDict):
    """One ranked result of a search case: the engine's evidence as stored (every field
    bounded, ``search.bounds.stored_result``) and the bench's verdict on it."""

    url: str
    title: str
    snippet: str
    published_date: str | None
    #: The fields Needle cut to their cap; present only when one was cut.
    truncated: NotRequired[list[str]]
    #: Judged benches (``benches.plan.judged_result``): the rating, null when the judge
    #: failed (``judge_error`` says why).
    rating: NotRequired[int | None]
    label: NotRequired[str | None]
    reasoning: NotRequired[str | None]
    gates: NotRequired[dict[str, str]]
    judge_reply: NotRequired[str | None]
    judge_error: NotRequired[str]
    #: Known-item benches (``benches.plan.matched_result``): the matcher's verdict and why,
    #: and the backstop judge's (null: not asked or undecided).
    det_match: NotRequired[bool]
    match_why: NotRequired[str]
    judge_match: NotRequired[bool | None]


class SearchCaseRecord(TypedDict):
    """One (query, engine) case in a search report; bench fields (gold, ranks) ride along."""

    query_id: str
    query: str
    stratum: str | None
    engine: str
    results: list[SearchResultRecord]
    search_error: str | None
    judge_errors: int
    judge_requests: int
    latency_s: float | None
    retries: int
    outcome: Outcome | None
    #: Result entries the engine sent that were not results (null, a string, no URL).
    malformed_results: NotRequired[int]
    verdict: NotRequired[str]
    skip_reason: NotRequired[str]
    error: NotRequired[str]
    #: Kept from the run ``--resume`` continued (its counters and latency are that run's).
    resumed: NotRequired[bool]
    #: Judged cases: the date freshness was judged against (the row's own day, else the
    #: judge's today, which ``NEEDLE_NOW`` pins), ISO.
    judge_today: NotRequired[str]
    #: Judged cases (and ``--judge``): what the judge's server showed (``judge.base.JudgeSeen``).
    judge_served_model: NotRequired[str | None]
    judge_output: NotRequired[str | None]


def search_case_record(*, query_id: str, query: str, stratum: str | None, engine: str,
                **bench_fields: Any) -> SearchCaseRecord:
    """A search case before it is run: its identity, counters at zero."""
    record = SearchCaseRecord(query_id=query_id, query=query, stratum=stratum, engine=engine,
                              results=[], search_error=None, judge_errors=0, judge_requests=0,
                              latency_s=None, retries=0, outcome=None)
    record.update(bench_fields)  # type: ignore[typeddict-item]  # bench-specific keys
    return record


class CaseRecord(TypedDict):
    """What a test hands the controller through ``report.user_properties``."""

    kind: Literal["recall", "search"]
    #: The dump or report this case lands in (``corpus__model``, ``bench__queries``).
    pair: str
    header: dict[str, Any]
    case: Any  # RecallCaseRecord | SearchCaseRecord, by ``kind``
    #: Lines for the terminal's "needle" section (a preflight note, say).
    messages: NotRequired[list[str]]
    #: Report-only detail: a recall case's line diff (shown, never dumped).
    diff: NotRequired[list[list[str]]]


class RecallDump(TypedDict):
    """``results/<corpus>__<model>.json``; built by ``recall.results.new_dump``."""

    schema_version: int
    benchmark: Literal["recall"]
    prompt_version: str
    scorer_version: str
    in_progress: bool
    complete: bool
    valid: bool
    corpus: dict[str, Any]
    model: dict[str, Any]
    sampling: dict[str, Any]
    scoring: dict[str, Any]
    notes: list[str]
    package: dict[str, Any]
    expected_cases: int
    cases: list[RecallCaseRecord]
    summary: dict[str, Any]
    resumed_from: NotRequired[dict[str, Any]]
    rescored_from: NotRequired[dict[str, Any]]
    shard: NotRequired[dict[str, Any]]

