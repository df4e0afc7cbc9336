"""The known-item harness (finance, scholar, legal): one gold answer per query, found or not.

A bench supplies what differs — how to read its gold, whether one result carries it, and
the groups its report breaks down by (``KnownItemBench``); everything else lives here once:
ranking the matches, the optional LLM backstop's rules, and the report.

Scoring rules, and why:
- a query is a hit for an engine when the gold is in its top K; recall@K is the share of
  hits, MRR@K the mean reciprocal rank of the first hit;
- a failed search (or a miss the backstop judge could not decide) is counted
  (``search_errors``, ``judge_errors``) and left out of the means: an outage is not a miss,
  and scoring it 0 would rank engines by uptime (the seed's rule; NEEDLE's code scores it 0);
- ``ultimate`` pools the engines that answered: the query is a hit for it when any engine
  hit, so its recall is the ceiling of the engines together, and a miss is
  *system-specific* when another engine found the gold, *universal* when none did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypedDict, TypeVar

from needle_lib.benches.tables import RowTables
from needle_lib.contract.outcome import Outcome, is_scored, is_skipped, pass_fail
from needle_lib.contract.records import (
    BenchCaseRecord,
    KnownItemCaseRecord,
    SearchResultRecord,
    known_item_case,
)
from needle_lib.contract.report import (
    Cell,
    KnownItemEngine,
    KnownItemQueryRow,
    KnownItemReport,
    Latency,
)
from needle_lib.jsonio import JSON, EncodedList, JSONObject
from needle_lib.metrics.latency import latency_stats
from needle_lib.metrics.urls import normalize_url
from needle_lib.search.types import SearchResult

ULTIMATE = "ultimate"


@dataclass(frozen=True)
class Match:
    """Whether one result carries the gold, and a short reason shown in a miss's message."""

    matched: bool
    why: str


class KnownItemGold(Protocol):
    """A bench's parsed gold: whatever it holds, it can say what it is in a miss message."""

    def describe(self) -> str: ...


G = TypeVar("G", bound=KnownItemGold)
G_contra = TypeVar("G_contra", bound=KnownItemGold, contravariant=True)


class Matcher(Protocol[G_contra]):
    def __call__(self, gold: G_contra, *, title: str, snippet: str, url: str) -> Match: ...


@dataclass(frozen=True, eq=False)
class KnownItemBench(Generic[G]):
    """A known-item bench as data: its name, gold reader, matcher and report groups.

    Benches differ in these and nothing else, so a bench module declares one instance
    (``FINANCE = KnownItemBench(...)``) instead of subclassing plumbing.
    """

    name: str
    #: ``query_source`` values of rows that belong to this bench.
    sources: tuple[str, ...]
    #: The bench's gold object from a row's ``gold``; ``ValueError`` says what is wrong.
    read_gold: Callable[[Any], G]
    #: Whether one result (snippet already capped) carries the gold, and why (not).
    matcher: Matcher[G]
    #: Report breakdowns, in order: ``by_<group>`` for each.
    group_names: tuple[str, ...]
    #: This query's value for each of ``group_names`` ("" = not in that breakdown).
    row_groups: Callable[[JSONObject, G], dict[str, str]]
    #: The groups whose values, joined, are the sampling stratum (``--sample``); () = all.
    stratum_groups: tuple[str, ...] = ()
    #: Group values in a fixed order (e.g. a freshness ladder); others sort by name.
    group_orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Whether ``--judge`` (the LLM backstop) applies to this bench.
    judge_backstop: bool = False
    #: Top-K when ``--num-results`` is not given.
    default_num_results: int = 5
    kind: ClassVar[str] = "known_item"

    def parse_gold(self, gold: Any) -> G:
        return self.read_gold(gold)

    def match(self, gold: G, result: SearchResult) -> Match:
        return self.matcher(gold, title=result.title, snippet=result.snippet, url=result.url)

    def describe(self, gold: G) -> str:
        """The gold as a miss message shows it."""
        return gold.describe()

    def groups(self, row: JSONObject, gold: G) -> dict[str, str]:
        return self.row_groups(row, gold)

    def stratum(self, row: JSONObject, gold: G) -> str | None:
        groups = self.groups(row, gold)
        names = self.stratum_groups or tuple(groups)
        return ":".join(groups[name] for name in names) or None

    def judge_context(self, gold: G) -> str:
        """What the backstop judge is told the answer is (field and accepted forms)."""
        return self.describe(gold)


def first_rank(flags: Sequence[bool | None]) -> int | None:
    """1-based rank of the first True, or None."""
    return next((rank for rank, flag in enumerate(flags, start=1) if flag), None)


def combined_rank(det_rank: int | None, judge_flags: Sequence[bool | None]) -> int | None:
    """The hit rank once the backstop has spoken: it may find an earlier hit, never revoke one."""
    judge_rank = first_rank(judge_flags)
    if judge_rank is not None and (det_rank is None or judge_rank < det_rank):
        return judge_rank
    return det_rank


def needs_judging(det_rank: int | None, n_results: int) -> int:
    """How many leading results the backstop judges: those ranked above the first hit."""
    return n_results if det_rank is None else det_rank - 1


class _UltimateCase(TypedDict):
    """``ultimate``'s case of one query, pooled from the engines' (no engine ran it): what
    its row and its figures read."""

    query_id: str
    query: str
    gold: JSON
    #: null: the pooled row shows the gold once, in the engines' rows
    gold_text: None
    groups: dict[str, str]
    judged: int
    judge_errors: int
    latency_s: None
    retries: int
    outcome: Outcome
    results: list[SearchResultRecord]
    hit_rank: int | None
    det_rank: int | None
    search_error: str | None


#: A case as a known-item report's figures and rows read it.
_FoldedCase = KnownItemCaseRecord | _UltimateCase


def _scored(case: _FoldedCase) -> bool:
    return is_scored(case.get("outcome")) and case.get("search_error") is None


def _ratio(numerator: float, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _breakdown(scored: list[tuple[dict[str, str], bool]], group: str,
               order: tuple[str, ...]) -> dict[str, Cell]:
    cells: dict[str, list[int]] = {}
    for groups, hit in scored:
        value = groups.get(group)
        if value:
            cells.setdefault(value, []).append(1 if hit else 0)
    keys = sorted(cells, key=lambda k: (order.index(k) if k in order else len(order), k))
    return {k: Cell(n=len(cells[k]), recall_at_k=sum(cells[k]) / len(cells[k])) for k in keys}


def _per_query(case: _FoldedCase, score: float | None) -> KnownItemQueryRow:
    return KnownItemQueryRow(
        query_id=case["query_id"],
        query=case["query"],
        gold=case.get("gold"),
        gold_text=case.get("gold_text"),
        groups=case.get("groups", {}),
        hit_rank=case.get("hit_rank"),
        det_rank=case.get("det_rank"),
        judged=case.get("judged", 0),
        judge_errors=case.get("judge_errors", 0),
        n_results=len(case.get("results", [])),
        results=case.get("results", []),
        search_error=case.get("search_error"),
        latency_s=case.get("latency_s"),
        score=score,
    )


def _ultimate_case(present: Mapping[str, KnownItemCaseRecord], engines: list[str],
                   num_results: int) -> _UltimateCase:
    """The pooled engine for one query: the first engine's hit at rank 1, then the rest, one
    page once however each engine spelled its URL."""
    pool = [present[e] for e in engines if e in present and _scored(present[e])]
    any_case = next(iter(present.values()))

    def pooled(outcome: Outcome, results: list[SearchResultRecord], rank: int | None,
               search_error: str | None) -> _UltimateCase:
        return _UltimateCase(query_id=any_case["query_id"], query=any_case["query"],
                             gold=any_case.get("gold"), groups=any_case.get("groups", {}),
                             judged=0, judge_errors=0, latency_s=None, retries=0,
                             gold_text=None,
                             outcome=outcome, results=results, hit_rank=rank, det_rank=rank,
                             search_error=search_error)

    if not pool:
        skipped = all(is_skipped(c.get("outcome")) for c in present.values())
        return pooled(Outcome.SKIPPED if skipped else Outcome.ERROR, [], None,
                      None if skipped else "no engine answered this query")
    hitter = next((c for c in pool if c.get("hit_rank")), None)
    results: list[SearchResultRecord] = []
    seen: set[str] = set()
    if hitter is not None:
        hit = hitter["results"][hitter["hit_rank"] - 1]  # type: ignore[operator]  # a hitter's rank is set
        results.append({**hit, "engine": hitter["engine"]})
        seen.add(normalize_url(hit["url"]))
    for case in pool:
        for result in case["results"]:
            key = normalize_url(result["url"])
            if key not in seen and len(results) < num_results:
                seen.add(key)
                results.append({**result, "engine": case["engine"]})
    rank = 1 if hitter is not None else None
    return pooled(pass_fail(bool(rank)), results, rank, None)


class _EngineSummary:
    """One engine's run-wide figures, a case at a time (its row goes to the tables)."""

    def __init__(self, *, pooled: bool) -> None:
        #: the ``ultimate`` engine: every miss of the pool is universal; no latency
        self.pooled = pooled
        self.scored = 0
        self.hits = 0
        self.reciprocal_ranks = 0.0
        self.search_errors = 0
        self.judged_results = 0
        self.judge_errors = 0
        self.judge_upgrades = 0
        self.skipped = 0
        self.retries = 0
        self.latencies: list[float] = []
        self.misses_system_specific = 0
        self.misses = 0
        #: (groups, hit) of each scored case, for the breakdowns
        self.scored_groups: list[tuple[dict[str, str], bool]] = []

    def add(self, case: _FoldedCase, *, hit_elsewhere: bool) -> KnownItemQueryRow:
        """Count ``case``; its per-query row. ``hit_elsewhere``: another engine hit the query."""
        scored = _scored(case)
        rank = case.get("hit_rank")
        hit = bool(rank)
        if scored:
            self.scored += 1
            self.scored_groups.append((case.get("groups", {}), hit))
            self.judge_upgrades += rank != case.get("det_rank")
            if rank:
                self.hits += 1
                self.reciprocal_ranks += 1 / rank
            else:
                self.misses += 1
                self.misses_system_specific += hit_elsewhere and not self.pooled
        if not is_skipped(case.get("outcome")):
            self.search_errors += case.get("search_error") is not None
        self.judged_results += case.get("judged", 0)
        self.judge_errors += case.get("judge_errors", 0)
        self.skipped += is_skipped(case.get("outcome"))
        self.retries += case.get("retries", 0)
        latency = case.get("latency_s")
        if case.get("search_error") is None and latency is not None:
            self.latencies.append(latency)
        return _per_query(case, (1.0 if hit else 0.0) if scored else None)

    def summary(self, group_names: tuple[str, ...], orders: Mapping[str, tuple[str, ...]],
                rows: list[KnownItemQueryRow] | EncodedList) -> KnownItemEngine:
        return KnownItemEngine(
            recall_at_k=_ratio(self.hits, self.scored),
            mrr_at_k=None if self.pooled else _ratio(self.reciprocal_ranks, self.scored),
            num_scored=self.scored,
            search_errors=self.search_errors,
            judged_results=self.judged_results,
            judge_errors=self.judge_errors,
            judge_upgrades=self.judge_upgrades,
            skipped=self.skipped,
            retries=self.retries,
            latency=None if self.pooled else Latency.of(latency_stats(self.latencies)),
            misses_system_specific=self.misses_system_specific,
            misses_universal=self.misses - self.misses_system_specific,
            breakdowns={group: _breakdown(self.scored_groups, group, orders.get(group, ()))
                        for group in group_names},
            per_query=rows,
        )


class KnownItemFold:
    """The known-item report built a query at a time (``add_query`` with every engine's case
    for it), so a run in flight can score each query as soon as its engines are in: per
    engine (then ``ultimate``) recall@K, MRR@K, breakdowns, misses, judge counts, latency,
    retries, and per-query rows in ``tables``."""

    def __init__(self, header: dict[str, Any], *, group_names: tuple[str, ...],
                 group_orders: Mapping[str, tuple[str, ...]],
                 tables: RowTables[KnownItemQueryRow]) -> None:
        self.header = header
        self.group_names = group_names
        self.group_orders = group_orders
        self.tables = tables
        self.engines: list[str] = list(header["engines"])
        self.summaries = {name: _EngineSummary(pooled=False) for name in self.engines}
        self.ultimate = _EngineSummary(pooled=True)
        self.num_queries = 0

    def add_query(self, present: Mapping[str, BenchCaseRecord]) -> None:
        """One query's cases by engine (every case of the query, in run order)."""
        cases = {engine: known_item_case(case) for engine, case in present.items()}
        self.num_queries += 1
        hit_by = {e for e, c in cases.items() if _scored(c) and c.get("hit_rank")}
        for engine, case in cases.items():
            if engine not in self.summaries:
                self.engines.append(engine)
                self.summaries[engine] = _EngineSummary(pooled=False)
            row = self.summaries[engine].add(case, hit_elsewhere=bool(hit_by - {engine}))
            self.tables.add(engine, row)
        pooled = _ultimate_case(cases, self.header["engines"], self.header["num_results"])
        self.tables.add(ULTIMATE, self.ultimate.add(pooled, hit_elsewhere=False))

    def report(self, *, in_progress: bool) -> KnownItemReport:
        header = self.header
        report_engines = {
            engine: self.summaries[engine].summary(self.group_names, self.group_orders,
                                                   self.tables.table(engine))
            for engine in self.engines
        }
        if self.engines or self.num_queries:  # a report with no engines has no ultimate
            report_engines[ULTIMATE] = self.ultimate.summary(
                self.group_names, self.group_orders, self.tables.table(ULTIMATE))
        return KnownItemReport(
            benchmark=header["bench"],
            in_progress=in_progress,
            header=header,
            num_queries=self.num_queries,
            k=header["num_results"],
            engine_order=header["engines"],
            engines=report_engines,
        )
