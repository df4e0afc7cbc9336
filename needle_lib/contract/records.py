"""Typed records that cross module boundaries: a case's record and the recall dump. JSON on
disk is their serialisation (xdist ships records as plain dicts, so these are TypedDicts,
not classes); each is built in one place: cases by :func:`recall_case_record`,
:func:`judged_case_record` and :func:`known_item_case_record` here, dumps by
``recall.results.new_dump``. The search report is a Struct of its own (``contract.report``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, final

from needle_lib.contract.outcome import Outcome
from needle_lib.jsonio import JSON, JSONObject
from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:  # schema reads these records: importing it here would be a cycle
    from needle_lib.contract.schema import SearchHeaderRecord


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
    #: A known-item report's ``ultimate`` rows: the engine the pooled result came from.
    engine: NotRequired[str]


class SearchCaseRecord(TypedDict):
    """What every (query, engine) case in a search report holds, whatever its bench's kind:
    the identity, the engine's results, the counters and the outcome. A case is one of
    :data:`BenchCaseRecord`; the folds that read only these fields take this."""

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
    #: A fixture's cleanup failed after the case was settled (the verdict stands).
    teardown_error: NotRequired[str]
    #: Kept from the run ``--resume`` continued (its counters and latency are that run's).
    resumed: NotRequired[bool]
    #: Judged cases (and ``--judge``): what the judge's server showed (``judge.base.JudgeSeen``).
    judge_served_model: NotRequired[str | None]
    judge_output: NotRequired[str | None]


@final
class JudgedCaseRecord(SearchCaseRecord):
    """A case of a judged bench (news, agentic_rare): every result rated by the judge."""

    #: The judge's profile of the query (``judge.profile.QueryProfile.as_dict``), which
    #: steered every rating; null when the judge never answered for it.
    query_profile: NotRequired[JSONObject | None]
    #: The date freshness was judged against (the row's own day, else the judge's today,
    #: which ``NEEDLE_NOW`` pins), ISO.
    judge_today: NotRequired[str | None]


@final
class KnownItemCaseRecord(SearchCaseRecord):
    """A case of a known-item bench (finance, scholar, legal): the gold, found or not."""

    #: The bench's gold as its query row gives it (``KnownItemBench.read_gold`` reads it):
    #: its shape is the bench's, and a query file may come from NEEDLE.
    gold: JSON
    #: The gold as a miss message shows it (``KnownItemBench.describe``).
    gold_text: str
    #: The query's value in each of the bench's report breakdowns ("" = not in one).
    groups: dict[str, str]
    #: 1-based rank of the first result the matcher found the gold in, or null.
    det_rank: int | None
    #: The same once the backstop judge (``--judge``) has spoken: it may find an earlier
    #: hit, never revoke one.
    hit_rank: int | None
    #: Results the backstop judge was asked about.
    judged: int


#: A search case, of the bench kind its run's header names (``header.kind``): every case
#: of a run is of its bench's kind, so a reader that needs one kind's fields narrows once
#: (:func:`known_item_case`).
BenchCaseRecord = JudgedCaseRecord | KnownItemCaseRecord


def judged_case_record(*, query_id: str, query: str, stratum: str | None,
                       engine: str) -> JudgedCaseRecord:
    """A judged case before it is run: its identity, counters at zero."""
    return JudgedCaseRecord(query_id=query_id, query=query, stratum=stratum, engine=engine,
                            results=[], search_error=None, judge_errors=0, judge_requests=0,
                            latency_s=None, retries=0, outcome=None)


def known_item_case_record(*, query_id: str, query: str, stratum: str | None, engine: str,
                           gold: JSON, gold_text: str,
                           groups: dict[str, str]) -> KnownItemCaseRecord:
    """A known-item case before it is run: its identity and gold, counters at zero, no hit."""
    return KnownItemCaseRecord(query_id=query_id, query=query, stratum=stratum, engine=engine,
                               results=[], search_error=None, judge_errors=0,
                               judge_requests=0, latency_s=None, retries=0, outcome=None,
                               gold=gold, gold_text=gold_text, groups=groups, det_rank=None,
                               hit_rank=None, judged=0)


def known_item_case(case: BenchCaseRecord) -> KnownItemCaseRecord:
    """``case`` read as a known-item case. A run's cases are all of its bench's kind (the
    report fold is picked by the header's bench), and every known-item case Needle wrote
    carries ``hit_rank``; a case without it is another bench's, and an error naming it
    (the file's schema checks only the fields all cases share)."""
    if "hit_rank" not in case:
        raise ConfigError(f"case {case.get('query_id')!r} on {case.get('engine')!r} has no "
                          "'hit_rank': not a known-item case, in a known-item run"[:300])
    return case


class _CaseRecordBase(TypedDict):
    #: The dump or report this case lands in (``corpus__model``, ``bench__queries``).
    pair: str
    #: Lines for the terminal's "needle" section (a preflight note, say).
    messages: NotRequired[list[str]]


class RecallRecord(_CaseRecordBase):
    """A recall case as a test hands it to the controller."""

    kind: Literal["recall"]
    #: The run's setup, which the dump records (``recall.plan.RecallPlan.header``).
    header: dict[str, Any]
    case: RecallCaseRecord
    #: Report-only detail: the case's line diff (shown, never dumped).
    diff: NotRequired[list[list[str]]]


class SearchRecord(_CaseRecordBase):
    """A search case as a test hands it to the controller; its case's kind is the bench's
    (``header.kind``)."""

    kind: Literal["search"]
    #: The run's setup, which the journal's header records (``SearchPlan.header``).
    header: SearchHeaderRecord
    case: BenchCaseRecord


#: What a test hands the controller through ``report.user_properties``, a union tagged on
#: ``kind``: the family, which decides the writer the controller files the case with (a
#: recall dump or a search report). A search case's bench kind is its header's, not a tag
#: of its own: the controller files judged and known-item cases alike, and only the
#: report's fold, picked by the header, reads the bench's fields.
CaseRecord = RecallRecord | SearchRecord


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

