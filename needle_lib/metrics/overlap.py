"""How much engines agree: pairwise URL overlap and URLs only one engine found.

Both work on normalised URLs per query and exclude the synthetic ``ultimate`` engine, which
is the union of all engines and would overlap with everyone by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from needle_lib.judge.verdict import RELEVANT_RATING
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


class OverlapTally:
    """How much engines agree, a query at a time (a run scored as it goes keeps a figure per
    engine pair and per engine, not every query's URLs).

    ``pairwise``: mean Jaccard and mean shared-URL count per engine pair (names sorted within
    a pair). A query counts for a pair only when both engines are present; a query where both
    returned nothing has no defined Jaccard and is skipped for that pair. ``unique_urls``:
    per engine, how many of its URLs no other engine returned for the same query (summed).
    """

    def __init__(self) -> None:
        self._jaccards: dict[tuple[str, str], list[float]] = {}
        self._shared: dict[tuple[str, str], list[int]] = {}
        self._unique: dict[str, int] = {}

    def add(self, urls_by_engine: Mapping[str, Sequence[str]]) -> None:
        sets = _url_sets(urls_by_engine)
        for a, b in combinations(sorted(sets), 2):
            union = sets[a] | sets[b]
            if not union:
                continue
            common = len(sets[a] & sets[b])
            self._jaccards.setdefault((a, b), []).append(common / len(union))
            self._shared.setdefault((a, b), []).append(common)
        for engine, urls in sets.items():
            others = set().union(*(s for name, s in sets.items() if name != engine))
            self._unique[engine] = self._unique.get(engine, 0) + len(urls - others)

    def pairwise(self) -> dict[tuple[str, str], PairOverlap]:
        return {
            pair: PairOverlap(sum(j) / len(j), sum(self._shared[pair]) / len(j), len(j))
            for pair, j in self._jaccards.items()
        }

    def unique_urls(self) -> dict[str, int]:
        return dict(self._unique)


#: A URL two engines share rated below ``RELEVANT_RATING`` is suspicious sharing (copied or
#: syndicated low-value results), not agreement on a good answer.
SHARED_MANY = 3
#: "Suspicious sharing" counts shared URLs within each list's first ``SHARED_TOP`` results:
#: three of the same five URLs is unlikely from two independent indexes.
SHARED_TOP = 5


@dataclass(frozen=True)
class PairSharing:
    """Sums over the queries both engines answered with at least one URL between them, so
    runs add up: mean Jaccard over a week is Σ ``jaccard_sum`` / Σ ``num_queries``."""

    jaccard_sum: float
    #: Queries where the two lists' top ``SHARED_TOP`` share at least ``SHARED_MANY`` URLs.
    num_shared3: int
    #: Queries with a shared low-rated URL or at least ``SHARED_MANY`` shared URLs.
    num_suspect: int
    #: Shared URLs the judge rated below ``RELEVANT_RATING`` (unrated URLs are not counted).
    low_shared_urls: int
    num_queries: int
    #: URLs in both lists, summed over queries.
    shared_urls: int = 0


RatedUrls = Mapping[str, Sequence[tuple[str, int | None]]]


def _best_ratings(results: Sequence[tuple[str, int | None]]) -> dict[str, int | None]:
    best: dict[str, int | None] = {}
    for url, rating in results:
        key = normalize_url(url)
        known = [r for r in (best.get(key), rating) if r is not None]
        best[key] = max(known) if known else None
    return best


def pair_sharing(per_query: Iterable[RatedUrls]) -> dict[tuple[str, str], PairSharing]:
    """Per engine pair (report order kept within a pair), how much and what they share.

    ``per_query`` maps each engine that answered a query (no search error) to its results as
    (url, judge rating or None).
    """
    sums: dict[tuple[str, str], list[float]] = {}
    for results_by_engine in per_query:
        ratings = {e: _best_ratings(r) for e, r in results_by_engine.items() if e != ULTIMATE}
        tops = {e: set(list(r)[:SHARED_TOP]) for e, r in ratings.items()}
        for a, b in combinations(ratings, 2):
            union = ratings[a].keys() | ratings[b].keys()
            if not union:
                continue
            shared = ratings[a].keys() & ratings[b].keys()
            many = len(tops[a] & tops[b]) >= SHARED_MANY
            low = 0
            for url in shared:
                known = [r for r in (ratings[a][url], ratings[b][url]) if r is not None]
                low += bool(known) and max(known) < RELEVANT_RATING
            cell = sums.setdefault((a, b), [0.0, 0, 0, 0, 0, 0])
            cell[0] += len(shared) / len(union)
            cell[1] += many
            cell[2] += low > 0 or many
            cell[3] += low
            cell[4] += 1
            cell[5] += len(shared)
    return {pair: PairSharing(s[0], int(s[1]), int(s[2]), int(s[3]), int(s[4]), int(s[5]))
            for pair, s in sums.items()}


@dataclass(frozen=True)
class Uniqueness:
    """Distinct URLs an engine returned, and how many no engine of another family did.

    Two readings of "a relevant URL only this engine found", both kept:
    ``relevant_unique_urls`` (NEEDLE's field, same meaning) counts relevant URLs no other
    family returned *as relevant*: what the engine alone turned into a useful answer.
    ``relevant_exclusive_urls`` counts relevant URLs no other family returned at all: what
    only its index reached. Until this field existed, Needle stored the second under the
    first's name (see ``dashboard.search_views.uniqueness_counts``).
    """

    unique_urls: int
    total_urls: int
    relevant_unique_urls: int
    relevant_total_urls: int
    num_queries: int
    relevant_exclusive_urls: int


def family_uniqueness(per_query: Iterable[Mapping[str, Sequence[tuple[str, bool]]]],
                      family: Callable[[str], str]) -> dict[str, Uniqueness]:
    """Per engine, summed over the queries it answered alongside at least one engine of
    another family (alone, every URL would be "unique"): its distinct URLs, those no other
    family returned, and the relevant ones of each (``Uniqueness``).

    ``per_query`` maps each engine that answered to its results as (url, relevant?); a
    family (``family(engine)``) counts as one engine, so a URL shared with a sibling variant
    of the same index is still unique.
    """
    sums: dict[str, list[int]] = {}
    for results_by_engine in per_query:
        urls: dict[str, dict[str, bool]] = {}
        for engine, results in results_by_engine.items():
            if engine == ULTIMATE:
                continue
            seen = urls.setdefault(engine, {})
            for url, relevant in results:
                key = normalize_url(url)
                seen[key] = seen.get(key, False) or relevant
        for engine, own in urls.items():
            others = [u for e, u in urls.items() if family(e) != family(engine)]
            if not others:
                continue
            elsewhere = set().union(*others)
            relevant_elsewhere = {key for u in others for key, good in u.items() if good}
            own_relevant = [key for key, good in own.items() if good]
            cell = sums.setdefault(engine, [0, 0, 0, 0, 0, 0])
            cell[0] += sum(key not in elsewhere for key in own)
            cell[1] += len(own)
            cell[2] += sum(key not in relevant_elsewhere for key in own_relevant)
            cell[3] += len(own_relevant)
            cell[4] += 1
            cell[5] += sum(key not in elsewhere for key in own_relevant)
    return {engine: Uniqueness(*cell) for engine, cell in sums.items()}
