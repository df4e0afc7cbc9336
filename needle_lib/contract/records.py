"""Typed records that cross module boundaries: a case's record and the recall dump. JSON on
disk is their serialisation (xdist ships records as plain dicts, so these are TypedDicts,
not classes); each is built in one place: cases by :func:`recall_case_record`,
:func:`judged_case_record` and :func:`known_item_case_record` here, dumps by
``recall.results.new_dump``. The search report is a Struct of its own (``contract.report``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, NotRequired, TypedDict, final

from msgspec import Meta

from needle_lib.contract.outcome import Outcome
from needle_lib.jsonio import JSON, JSONObject
from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:  # schema reads these records: importing it here would be a cycle
    from needle_lib.contract.schema import SearchHeaderRecord


class CompositionPart(TypedDict):
    """Scored lines of one kind (code or prose): how many the answer matched, of how many."""

    matched: int
    total: int


class Composition(TypedDict):
    """What a case's scored lines were (``recall.score.score_answer``); a dump's summary
    adds them up over its scored cases."""

    code: CompositionPart
    prose: CompositionPart
    blank_skipped: Annotated[int, Meta(description="Blank lines left out of the score.")]


class CaseIdentity(TypedDict):
    """Which function a recall case asks about (``recall.plan.RecallCase.case_fields``):
    the arguments of :func:`recall_case_record`."""

    function: str
    case_id: str
    file: str
    start_line: int
    signature: str
    prompt_tokens_est: int | None


class RecallCaseRecord(CaseIdentity):
    """One recall case in a dump: its identity, then the rest. Every key is present; what
    does not apply is null (an errored case has no score, a scored one no error)."""

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
    composition: Composition | None
    #: The answer as the server sent it, up to ``recall.results.STORED_ANSWER_CHARS``
    #: characters (``recall.results.answer_fields``).
    response: str | None
    reasoning: str | None
    finish_reason: str | None
    latency_s: float | None
    #: The server's ``usage`` and llama.cpp's ``timings`` blocks as sent: their shape is the
    #: server's (``llm.truncation.served_prompt_tokens`` reads what it knows of them).
    usage: JSONObject | None
    timings: JSONObject | None
    served_model: str | None
    attempts: int | None
    error: str | None
    skip_reason: str | None
    #: Written with every answer (``recall.results.answer_fields``): the chat client kept
    #: only the head of a body larger than the model's ``max_answer_bytes``.
    answer_truncated_by_needle: NotRequired[bool]
    requested_at: NotRequired[float]
    resumed: NotRequired[bool]
    #: Set by the controller when the case's teardown failed after it settled.
    teardown_error: NotRequired[str]
    #: Set when the answer or reasoning was longer than ``recall.results.STORED_ANSWER_CHARS``:
    #: each cut field's full length in characters (the stored head is what was scored).
    answer_cut: NotRequired[dict[str, int]]


class AnswerFields(TypedDict):
    """A case's fields from its answer (``recall.results.answer_fields``), in the order the
    case record holds them."""

    response: str | None
    reasoning: str | None
    finish_reason: str | None
    usage: JSONObject | None
    timings: JSONObject | None
    latency_s: float
    served_model: str | None
    attempts: int
    prompt_count: str | None
    answer_truncated_by_needle: bool
    answer_cut: NotRequired[dict[str, int]]


class ScoreFields(TypedDict):
    """A case's fields from its score (``recall.results.score_fields``)."""

    matched: int
    scored: int
    ratio: float
    passed: bool
    hallucinated: int
    reindented: int
    bonus: int
    missing: int
    composition: Composition


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
    #: The verdict the case's benchmark decided once it was answered and scored
    #: (``kernel.benchmark.CaseVerdict``): an ``Outcome``'s value (xdist ships records as
    #: plain JSON types). The controller settles the case with it.
    decided: NotRequired[str]


class RecallRecord(_CaseRecordBase):
    """A recall case as a test hands it to the controller."""

    kind: Literal["recall"]
    #: The run's setup, which the dump records (``recall.plan.RecallPlan.header``).
    header: RecallHeader
    case: RecallCaseRecord
    #: Report-only detail: the case's line diff (shown, never dumped).
    diff: NotRequired[list[list[str]]]


class _SearchRecordBase(_CaseRecordBase):
    #: The run's setup, which the journal's header records (``SearchPlan.header``).
    header: SearchHeaderRecord


class JudgedRecord(_SearchRecordBase):
    """A case of a judged bench (news, agentic_rare) as a test hands it to the controller."""

    kind: Literal["judged"]
    case: JudgedCaseRecord


class KnownItemRecord(_SearchRecordBase):
    """A case of a known-item bench (finance, scholar, legal) as a test hands it to the
    controller."""

    kind: Literal["known_item"]
    case: KnownItemCaseRecord


SearchRecord = JudgedRecord | KnownItemRecord

#: What a test hands the controller through ``report.user_properties``: a union tagged on
#: ``kind``, the benchmark kind, so each kind's record declares its own case (a recall
#: case, a judged or a known-item search case) and code that holds one needs no cast. The
#: controller files a case by its family (``family_of``): a recall dump or a search report.
CaseRecord = RecallRecord | JudgedRecord | KnownItemRecord


def family_of(record: CaseRecord) -> Literal["recall", "search"]:
    """The family a case is filed with: recall (a dump) or search (a report)."""
    return "recall" if record["kind"] == "recall" else "search"


class LeftOutFile(TypedDict):
    """A file the glob or the checkout matched that Needle refused to read."""

    path: str
    reason: str


class RepoProvenance(TypedDict):
    """Where a ``--repo`` corpus came from (``recall.repo.RepoSnapshot.describe``)."""

    path: str
    folder: str
    commit: str
    dirty: bool
    include: list[str]
    exclude: list[str]
    max_prompt_tokens: int
    budget_source: str
    candidates: int
    chosen: int


class CorpusDescription(TypedDict):
    """A corpus's text, enough to prove two runs read the same (``recall.corpus.Corpus.
    describe``)."""

    name: str
    sha256: str
    files: list[str]
    chars: int
    lines: int
    tokens: int
    tokenizer: str
    language: str
    repo: NotRequired[RepoProvenance]
    left_out: NotRequired[list[LeftOutFile]]


class RecallCorpus(CorpusDescription):
    """A dump's ``corpus``: the text, and the config it was chosen by (a path, ``file:…``
    or ``repo:…``)."""

    config: str


class ModelRequest(TypedDict):
    """What shapes a model's requests (``llm.config.ModelConfig.request_shape``): never the
    API key, only where it came from (``auth``)."""

    model: str
    label: str
    config: str
    source: str
    base_url: str
    auth: str
    temperature: float
    token_field: str
    max_tokens: int
    reasoning_effort: str | None
    prefill_no_think: bool
    suppress_thinking: bool
    stop: list[str]
    timeout: float
    concurrency: int


class RecallModel(TypedDict):
    """A dump's ``model``."""

    key: str
    name: str
    label: str
    request: ModelRequest
    no_think_suffix: bool


class Sampling(TypedDict):
    """Which functions a run asked about: the corpus's sample policy, and what it chose."""

    k: int
    seed: int
    primary_lines: int
    min_code_lines: int
    functions: list[str]
    eligible: int
    excluded: list[str]


class ScoringRecord(TypedDict):
    """The scoring policy (``recall.corpus.ScoringPolicy``) a dump's cases were scored
    under; ``rescored_from`` is the one they were scored under before ``needle rescore``."""

    count_comments: Annotated[bool, Meta(description="Comment lines count towards the score.")]
    relax_indent: Annotated[bool, Meta(description="Lines match whatever their indentation.")]


class ShardRecord(TypedDict):
    """A ``--shard-by case`` part: which of how many, and the cases it was given."""

    index: int
    count: int
    by: str
    case_ids: list[str]


class ResumedFrom(TypedDict):
    """The dump a ``--resume`` run continued, and how many of its cases it kept."""

    dump: str
    cases_kept: int


class _RecallSetup(TypedDict):
    """The setup keys a recall run's header and its dump share."""

    corpus: RecallCorpus
    model: RecallModel
    sampling: Sampling
    scoring: ScoringRecord
    #: ``--notes``: free text about the run (server, quantisation…).
    notes: str
    #: The Needle that wrote the run (``provenance.package_info``: name, version,
    #: git_revision; the search header carries the same).
    package: dict[str, str]
    expected_cases: int
    shard: NotRequired[ShardRecord]
    resumed_from: NotRequired[ResumedFrom]


class RecallHeader(_RecallSetup):
    """A recall run's setup (``recall.plan.RecallPlan.header``), the first line of its
    journal; a dump holds these keys between its state and its cases."""

    #: The corpus's own selection and policy: only such a run becomes the pair's latest view.
    default_selection: bool


class LatencySummary(TypedDict):
    mean: float | None
    p50: float | None


class PromptTokensSummary(TypedDict):
    """The median prompt: as the server counted it, and as estimated under the reference
    tokenizer."""

    served: int | None
    estimate: int | None


class RecallSummary(TypedDict):
    """A dump's ``summary`` (``recall.results.summarize``); the outcome counts are keyed by
    ``recall.results.summary_key``. Percentages are over the scored cases."""

    cases: int
    expected: int
    not_run: int
    passed: int
    failed: int
    errors: int
    skipped: int
    #: Skips that are verdicts: answered, with nothing to score under the policy.
    unscored: int
    matched: int
    scored: int
    matched_pct: float | None
    pass_rate: float | None
    hallucinated: int
    reindented: int
    bonus: int
    code: CompositionPart
    prose: CompositionPart
    blank_skipped: int
    latency_s: LatencySummary
    prompt_tokens: PromptTokensSummary


class RecallDump(_RecallSetup):
    """``results/<corpus>__<model>.json``; built by ``recall.results.new_dump``, in this
    key order: the state, the header (``RecallHeader``), the cases, the summary, then what
    happened to the run afterwards."""

    schema_version: int
    benchmark: Literal["recall"]
    prompt_version: str
    scorer_version: str
    in_progress: bool
    complete: bool
    valid: bool
    #: absent from dumps written before the result store (they count as default runs)
    default_selection: NotRequired[bool]
    cases: list[RecallCaseRecord]
    summary: RecallSummary
    rescored_from: NotRequired[ScoringRecord]
    #: The run file a dump was stored as (``recall.store.STORED_AS``), relative to the
    #: result store; a latest view that is a copy says which run it copies.
    stored_as: NotRequired[str]
