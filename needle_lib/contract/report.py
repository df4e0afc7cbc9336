"""The search report in memory (issue 33 item 1): msgspec Structs the folds build, one
union tagged on the bench kind, and the one function that gives a report its file shape.

``benches.judged.JudgedFold`` and ``benches.known_item.KnownItemFold`` build a
:data:`SearchReport`; every reader of a report in memory (the terminal and pytest-html
summaries, ``needle publish``, the TREC export, judge agreement, ``needle merge``) takes one
and reads its fields, so a figure a fold stopped writing is a type error, not a ``KeyError``
in a page builder.

The file a report is written to keeps the shape every Needle so far has written, which is
not a Struct's own: the header's fields are repeated at the top level (NEEDLE's report
shape), and a known-item engine's breakdowns are ``by_<group>`` keys whose names are the
bench's groups. :func:`report_fields` lays a report out that way, and it is the only place
that does; a report read back from its file is scored again from its ``cases``
(``contract.schema.read_search_report``), never decoded into these models.

Per-query rows are TypedDicts (:class:`JudgedQueryRow`, :class:`KnownItemQueryRow`): a run in
flight spools each one as JSON text the moment its query is scored (``benches.tables``), so
a table is either a list of rows or that spool.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Final,
    Literal,
    NotRequired,
    TypedDict,
    overload,
)

import msgspec
from msgspec import Meta, Struct

from needle_lib.contract.records import BenchCaseRecord, SearchResultRecord
from needle_lib.jsonio import EncodedList

if TYPE_CHECKING:
    from needle_lib.metrics.latency import LatencyStats

#: Both kinds' reports have said ``schema_version`` 1 since Needle first wrote them.
REPORT_SCHEMA_VERSION: Final = 1


def _doc(text: str) -> Meta:
    return Meta(description=text)


class Latency(Struct, kw_only=True):
    """An engine's successful searches' latency (``metrics.latency.latency_stats``)."""

    n: int
    mean: float | None
    p50: float | None
    p95: float | None

    @classmethod
    def of(cls, stats: LatencyStats) -> Latency:
        return cls(n=stats.n, mean=stats.mean, p50=stats.p50, p95=stats.p95)


class RankedRating(TypedDict):
    """One result of the pooled ``ultimate`` ranking: a URL and its best rating."""

    url: str
    rating: int


class JudgedQueryRow(TypedDict):
    """One query of one engine in a judged report (``ultimate``'s rows carry no latency)."""

    query_id: str
    query: str
    #: nDCG@k against the pooled ideal; null when the query was not scored for the engine.
    ndcg: float | None
    dcg: float | None
    ratings: list[int | None]
    penalized_ratings: list[int] | None
    results: list[SearchResultRecord] | list[RankedRating]
    search_error: str | None
    judge_errors: int
    #: Some engine's result could not be judged: the query is left out for every engine.
    pool_incomplete: bool
    latency_s: NotRequired[float | None]


class KnownItemQueryRow(TypedDict):
    """One query of one engine in a known-item report."""

    query_id: str
    query: str
    gold: Any  # the bench's gold as its query row gives it (``KnownItemBench.read_gold``)
    gold_text: str | None
    groups: dict[str, str]
    #: 1-based rank of the first result carrying the gold (after the backstop), or null.
    hit_rank: int | None
    #: The same before the backstop judge spoke (the matcher's alone).
    det_rank: int | None
    judged: int
    judge_errors: int
    n_results: int
    results: list[SearchResultRecord]
    search_error: str | None
    latency_s: float | None
    #: 1.0 hit, 0.0 miss, null not scored.
    score: float | None


class JudgedEngine(Struct, kw_only=True):
    """One engine's (or ``ultimate``'s) figures in a judged report."""

    mean_ndcg: Annotated[float | None, _doc("Mean nDCG@k over the scored queries.")]
    num_scored: int
    search_errors: int
    judge_errors: int
    skipped: int
    retries: int
    latency: Latency
    per_query: Annotated[list[JudgedQueryRow] | EncodedList,
                         _doc("A row per query, in run order (spooled: JSON text).")]


class Cell(Struct, kw_only=True):
    """One value of a known-item breakdown: its scored queries and their recall."""

    n: int
    recall_at_k: float


class KnownItemEngine(Struct, kw_only=True):
    """One engine's (or ``ultimate``'s) figures in a known-item report."""

    recall_at_k: float | None
    mrr_at_k: Annotated[float | None, _doc("Null for ``ultimate`` (its hit is rank 1).")]
    num_scored: int
    search_errors: int
    judged_results: int
    judge_errors: int
    judge_upgrades: Annotated[int, _doc("Hits the backstop judge found first.")]
    skipped: int
    retries: int
    latency: Annotated[Latency | None, _doc("Null for ``ultimate``.")]
    misses_system_specific: int
    misses_universal: int
    breakdowns: Annotated[dict[str, dict[str, Cell]],
                          _doc("group → value → cell; written as ``by_<group>`` keys.")]
    per_query: Annotated[list[KnownItemQueryRow] | EncodedList,
                         _doc("A row per query, in run order (spooled: JSON text).")]


class Overlap(Struct, kw_only=True):
    """How much two engines agree, over the queries both answered."""

    engines: list[str]
    mean_jaccard: float
    mean_shared: float
    num_queries: int


class _Report(Struct, kw_only=True, tag_field="kind"):
    """What both kinds' reports hold. ``complete``, ``scored_cases`` and ``cases`` are
    stamped on by ``runfiles.CaseTally`` and the writer once the run's cases are known."""

    schema_version: int = REPORT_SCHEMA_VERSION
    benchmark: Annotated[str, _doc("The bench (``header.bench``).")]
    in_progress: bool
    num_queries: int
    k: Annotated[int, _doc("The cut-off of the figures (@k).")]
    header: Annotated[dict[str, Any], _doc("The run's setup (``contract.schema.SearchHeader``)"
                                           "; its fields are repeated at the top level.")]
    complete: bool | None = None
    scored_cases: int | None = None
    cases: Annotated[list[BenchCaseRecord] | EncodedList | None,
                     _doc("The run's cases, so a report can be merged or scored again "
                          "without its journal (spooled: JSON text).")] = None


class JudgedReport(_Report, kw_only=True, tag="judged"):
    """A judged bench's report (news, agentic_rare): pooled nDCG@k per engine."""

    kind: ClassVar[Literal["judged"]] = "judged"

    num_results: int
    judged_pairs: Annotated[int, _doc("Distinct (query, page, what the judge saw) rated.")]
    judge_requests: int
    engines: dict[str, JudgedEngine]
    overlap: list[Overlap]
    unique_urls: dict[str, int]


class KnownItemReport(_Report, kw_only=True, tag="known_item"):
    """A known-item bench's report (finance, scholar, legal): recall@K and MRR@K."""

    kind: ClassVar[Literal["known_item"]] = "known_item"

    engine_order: Annotated[list[str], _doc("The engines as the header lists them.")]
    engines: dict[str, KnownItemEngine]


SearchReport = JudgedReport | KnownItemReport
EngineFigures = JudgedEngine | KnownItemEngine


def engine_fields(figures: EngineFigures) -> dict[str, Any]:
    """An engine's figures in the report file's shape (``by_<group>`` keys before
    ``per_query``)."""
    fields = {name: getattr(figures, name) for name in figures.__struct_fields__}
    per_query = fields.pop("per_query")
    if isinstance(figures, KnownItemEngine):
        breakdowns = fields.pop("breakdowns")
        fields.update({f"by_{group}": {value: msgspec.to_builtins(cell)
                                       for value, cell in cells.items()}
                       for group, cells in breakdowns.items()})
    latency = fields["latency"]
    fields["latency"] = None if latency is None else msgspec.to_builtins(latency)
    fields["per_query"] = per_query
    return fields


def report_fields(report: SearchReport) -> dict[str, Any]:
    """``report`` laid out as its file is written (``jsonio.write_json_by_line_atomic``
    writes the result; a spooled table or case list stays text): the setup's fields, the
    header's own repeated at the top level, then the figures; ``complete``,
    ``scored_cases``, ``header`` and ``cases`` last, when they are set."""
    lead = {"schema_version": report.schema_version, "benchmark": report.benchmark,
            "kind": report.kind, "in_progress": report.in_progress,
            **{key: value for key, value in report.header.items()
               if key not in ("bench", "engines")},
            "num_queries": report.num_queries}
    engines = {name: engine_fields(figures) for name, figures in report.engines.items()}
    if isinstance(report, JudgedReport):
        fields = {**lead, "num_results": report.num_results, "k": report.k,
                  "judged_pairs": report.judged_pairs, "judge_requests": report.judge_requests,
                  "engines": engines,
                  "overlap": [msgspec.to_builtins(pair) for pair in report.overlap],
                  "unique_urls": report.unique_urls}
    else:
        fields = {**lead, "k": report.k, "engine_order": report.engine_order,
                  "engines": engines}
    if report.complete is not None:
        fields["complete"] = report.complete
    if report.scored_cases is not None:
        fields["scored_cases"] = report.scored_cases
    if report.complete is not None or report.scored_cases is not None:
        fields["header"] = report.header
    if report.cases is not None:
        fields["cases"] = report.cases
    return fields


def summary_of(report: SearchReport) -> SearchReport:
    """``report`` without its cases and per-query rows: what the terminal and the
    pytest-html summary show, and all the controller keeps once the report is written."""
    engines: Any = {name: msgspec.structs.replace(figures, per_query=[])
                    for name, figures in report.engines.items()}
    return msgspec.structs.replace(report, engines=engines, cases=None)


@overload
def built_rows(figures: JudgedEngine) -> list[JudgedQueryRow]: ...


@overload
def built_rows(figures: KnownItemEngine) -> list[KnownItemQueryRow]: ...


@overload
def built_rows(figures: EngineFigures) -> list[JudgedQueryRow] | list[KnownItemQueryRow]: ...


def built_rows(figures: EngineFigures) -> list[JudgedQueryRow] | list[KnownItemQueryRow]:
    """An engine's per-query rows of a report built in memory (``benches.registry.
    build_report``); a run in flight spools them to disk as text instead."""
    rows = figures.per_query
    if not isinstance(rows, list):
        raise TypeError("a report scored by a run in flight holds its rows as text")
    return rows
