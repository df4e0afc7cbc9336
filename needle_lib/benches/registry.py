"""Every search bench by name: the plugin asks here and never imports a bench itself.

An eval module names its bench (``BENCH = "finance"``); the registry says what kind it is
(judged or known-item), which rows of a query file belong to it, and how its report is
built. Bench modules, and the scoring they need (metrics, judge, engines), are imported on
first use, so a recall run never loads them: the plugin imports this module for the names.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias, TypeVar

from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:
    from needle_lib.benches.known_item import KnownItemBench
    from needle_lib.benches.queries import Query
    from needle_lib.benches.tables import RowTables
    from needle_lib.contract.records import BenchCaseRecord, SearchCaseRecord
    from needle_lib.contract.report import SearchReport

NDCG_K = 5


@dataclass(frozen=True)
class JudgedBench:
    """A bench scored by the relevance judge with pooled nDCG (news, agentic_rare)."""

    name: str
    sources: tuple[str, ...]
    kind: ClassVar[str] = "judged"
    default_num_results: ClassVar[int] = NDCG_K


_JUDGED = {
    "news": JudgedBench("news", ("news", "fresh-queries")),
    "agentic_rare": JudgedBench("agentic_rare", ("agentic_rare",)),
}
_KNOWN_ITEM = {
    "finance": "needle_lib.benches.finance.bench:FINANCE",
    "scholar": "needle_lib.benches.scholar.bench:SCHOLAR",
    "legal": "needle_lib.benches.legal.bench:LEGAL",
}
BENCH_NAMES = (*_JUDGED, *_KNOWN_ITEM)

Bench: TypeAlias = "JudgedBench | KnownItemBench[Any]"


@cache
def bench_named(name: str) -> Bench:
    if name in _JUDGED:
        return _JUDGED[name]
    if name not in _KNOWN_ITEM:
        raise ConfigError(f"unknown search bench {name!r}; known: {', '.join(BENCH_NAMES)}")
    module, _, attribute = _KNOWN_ITEM[name].partition(":")
    bench: KnownItemBench[Any] = getattr(importlib.import_module(module), attribute)
    return bench


@cache
def _all_sources() -> frozenset[str]:
    return frozenset(s for name in BENCH_NAMES for s in bench_named(name).sources)


def _belongs(bench: Bench, query: Query) -> bool:
    """Rows that name their bench go to it alone; other rows go by whether they carry gold."""
    if query.source in _all_sources():
        return query.source in bench.sources
    return (query.gold is not None) == (bench.kind == "known_item")


def select_queries(bench: Bench, queries: list[Query]) -> list[Query]:
    """The bench's rows of a query file; a known-item row with unusable gold is an error
    naming its file and line (a silently dropped row would shift every engine's recall)."""
    from needle_lib.benches.known_item import KnownItemBench

    own = [q for q in queries if _belongs(bench, q)]
    if not isinstance(bench, KnownItemBench):
        return own
    selected = []
    for query in own:
        try:
            gold = bench.parse_gold(query.gold)
        except ValueError as exc:
            raise ConfigError(f"{query.where or query.query_id}: {bench.name} gold: {exc}") \
                from None
        selected.append(replace(query, stratum=bench.stratum(query.row, gold)))
    return selected


class ReportFold(Protocol):
    """A bench's report, built a query at a time (``benches.judged``, ``benches.known_item``)."""

    def add_query(self, present: Mapping[str, BenchCaseRecord]) -> None: ...

    def report(self, *, in_progress: bool) -> SearchReport: ...


def report_fold(header: dict[str, Any], tables: RowTables[Any]) -> ReportFold:
    """An empty report of the bench named in ``header``, its rows going to ``tables``."""
    from needle_lib.benches import judged, known_item

    bench = bench_named(header["bench"])
    if isinstance(bench, known_item.KnownItemBench):
        return known_item.KnownItemFold(header, group_names=bench.group_names,
                                        group_orders=bench.group_orders, tables=tables)
    return judged.JudgedFold(header, k=NDCG_K, tables=tables)


Case = TypeVar("Case", bound="SearchCaseRecord")


def by_query(cases: Iterable[Case]) -> dict[str, dict[str, Case]]:
    """Cases grouped by query, then engine, each in first-appearance order (a later case of
    the same query and engine replaces the earlier one, as in the run itself)."""
    grouped: dict[str, dict[str, Case]] = {}
    for case in cases:
        grouped.setdefault(case["query_id"], {})[case["engine"]] = case
    return grouped


def build_report(header: dict[str, Any], cases: Iterable[BenchCaseRecord], *,
                 in_progress: bool) -> SearchReport:
    """The run report of the bench named in ``header``, from cases in memory."""
    from needle_lib.benches.tables import MemoryTables

    tables: MemoryTables[Any] = MemoryTables()
    return fold_report(report_fold(header, tables), cases, in_progress=in_progress)


def fold_report(fold: ReportFold, cases: Iterable[BenchCaseRecord], *,
                in_progress: bool) -> SearchReport:
    """``fold``'s report once every query of ``cases`` is added."""
    for present in by_query(cases).values():
        fold.add_query(present)
    return fold.report(in_progress=in_progress)
