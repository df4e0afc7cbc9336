"""How much engines agree: pairwise URL overlap and URLs only one engine found.

Both work on normalised URLs per query and exclude the synthetic ``ultimate`` engine, which
is the union of all engines and would overlap with everyone by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from needle_lib.metrics.ndcg import ULTIMATE
from needle_lib.metrics.urls import normalize_url


@dataclass(frozen=True)
class PairOverlap:
    """Means over the queries both engines answered with at least one URL between them."""

    mean_jaccard: float
    mean_shared: float
    num_queries: int


def _url_sets(urls_by_engine: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    return {
        engine: {normalize_url(u) for u in urls}
        for engine, urls in urls_by_engine.items()
        if engine != ULTIMATE
    }


def pairwise_overlap(
    per_query: Iterable[Mapping[str, Sequence[str]]],
) -> dict[tuple[str, str], PairOverlap]:
    """Mean Jaccard and mean shared-URL count per engine pair (names sorted within a pair).

    A query counts for a pair only when both engines are present; a query where both returned
    nothing has no defined Jaccard and is skipped for that pair.
    """
    jaccards: dict[tuple[str, str], list[float]] = {}
    shared: dict[tuple[str, str], list[int]] = {}
    for urls_by_engine in per_query:
        sets = _url_sets(urls_by_engine)
        for a, b in combinations(sorted(sets), 2):
            union = sets[a] | sets[b]
            if not union:
                continue
            common = len(sets[a] & sets[b])
            jaccards.setdefault((a, b), []).append(common / len(union))
            shared.setdefault((a, b), []).append(common)
    return {
        pair: PairOverlap(sum(j) / len(j), sum(shared[pair]) / len(j), len(j))
        for pair, j in jaccards.items()
    }


def unique_urls(per_query: Iterable[Mapping[str, Sequence[str]]]) -> dict[str, int]:
    """Per engine, how many of its URLs no other engine returned for the same query (summed)."""
    counts: dict[str, int] = {}
    for urls_by_engine in per_query:
        sets = _url_sets(urls_by_engine)
        for engine, urls in sets.items():
            others = set().union(*(s for name, s in sets.items() if name != engine))
            counts[engine] = counts.get(engine, 0) + len(urls - others)
    return counts
