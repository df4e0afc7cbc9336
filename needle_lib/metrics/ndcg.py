"""nDCG@K against a pooled ideal, with a redundancy penalty, for the judged benchmarks.

Why pooled: no engine's own list is a fair ideal. The ideal ranking is the best rating each
distinct (normalised) URL received from any engine, sorted descending — the synthetic
``ultimate`` engine — so ``ultimate`` scores exactly 1 and every engine is measured against
what the whole pool found. A query where nothing relevant was found (IDCG = 0) carries no
signal and is excluded from means rather than counted as 0 or 1.

Redundancy penalty: within one engine's list, a repeat of an already-seen normalised URL rates
0 — a duplicate adds no evidence. The penalty is keyed on the full normalised URL, never the
host, so ``site:`` queries (where every result is expected to share one host) are not
penalised for that; an exact repeat of a URL is still rated 0 in a ``site:`` query too,
because it is still no new page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from needle_lib.metrics.urls import normalize_url

#: Google "Needs Met" rating (0–4) → gain. Steep on purpose: only 3 and 4 are really useful.
GAINS: Mapping[int, float] = {4: 1.0, 3: 0.667, 2: 0.117, 1: 0.0, 0: 0.0}
ULTIMATE = "ultimate"


@dataclass(frozen=True)
class RatedResult:
    """One judged result: its URL and the judge's 0–4 rating."""

    url: str
    rating: int


@dataclass(frozen=True)
class MeanScore:
    """Mean over the queries that produced a score; ``num_scored`` says how many did."""

    mean: float | None
    num_scored: int


def gain(rating: int) -> float:
    if rating not in GAINS:
        raise ValueError(f"rating {rating!r} is not a Needs Met rating (0..4)")
    return GAINS[rating]


def dcg(gains: Sequence[float], k: int) -> float:
    """Σ gain_i / log2(i + 1) over ranks i = 1..k."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains[:k], start=1))


def penalized_gains(results: Sequence[RatedResult]) -> list[float]:
    """Gains in rank order, a repeated normalised URL gaining 0."""
    seen: set[str] = set()
    gains = []
    for result in results:
        key = normalize_url(result.url)
        gains.append(0.0 if key in seen else gain(result.rating))
        seen.add(key)
    return gains


def pooled_ratings(rankings: Mapping[str, Sequence[RatedResult]]) -> dict[str, int]:
    """Best rating per normalised URL over every engine except ``ultimate``."""
    pool: dict[str, int] = {}
    for engine, results in rankings.items():
        if engine == ULTIMATE:
            continue
        for result in results:
            if result.rating not in GAINS:
                raise ValueError(
                    f"engine {engine!r}, url {result.url!r}: rating {result.rating!r} "
                    "is not a Needs Met rating (0..4)"
                )
            key = normalize_url(result.url)
            pool[key] = max(pool.get(key, result.rating), result.rating)
    return pool


def ultimate_ranking(rankings: Mapping[str, Sequence[RatedResult]], k: int) -> list[RatedResult]:
    """The pooled oracle list: best rating first, ties by URL so reports are reproducible."""
    pool = pooled_ratings(rankings)
    ordered = sorted(pool.items(), key=lambda item: (-GAINS[item[1]], -item[1], item[0]))
    return [RatedResult(url, rating) for url, rating in ordered[:k]]


def query_ndcg(
    rankings: Mapping[str, Sequence[RatedResult]], *, k: int = 5
) -> dict[str, float | None]:
    """nDCG@k per engine for one query, plus ``ultimate``; all None when IDCG is 0.

    ``rankings`` holds only engines whose search and judging succeeded for this query (an
    engine that returned nothing successfully is an empty list and scores 0).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ideal = ultimate_ranking(rankings, k)
    idcg = dcg([GAINS[r.rating] for r in ideal], k)
    engines = [name for name in rankings if name != ULTIMATE]
    if idcg == 0:
        return {name: None for name in [*engines, ULTIMATE]}
    scores: dict[str, float | None] = {
        name: dcg(penalized_gains(rankings[name]), k) / idcg for name in engines
    }
    scores[ULTIMATE] = dcg(penalized_gains(ideal), k) / idcg
    return scores


def mean_ndcg(per_query: Iterable[Mapping[str, float | None]]) -> dict[str, MeanScore]:
    """Per-engine mean over queries with a score (None and absent engines are skipped)."""
    values: dict[str, list[float]] = {}
    for scores in per_query:
        for engine, score in scores.items():
            bucket = values.setdefault(engine, [])
            if score is not None:
                bucket.append(score)
    return {
        engine: MeanScore(sum(v) / len(v) if v else None, len(v)) for engine, v in values.items()
    }
