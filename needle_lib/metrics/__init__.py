"""Ranking metrics: pooled nDCG@K, latency, engine overlap (known-item recall/MRR are in
``benches.known_item``, where the hit rank is decided)."""

from needle_lib.metrics.latency import LatencyStats, latency_stats, percentile
from needle_lib.metrics.ndcg import (
    GAINS,
    ULTIMATE,
    MeanScore,
    RatedResult,
    dcg,
    gain,
    mean_ndcg,
    penalized_gains,
    pooled_ratings,
    query_ndcg,
    ultimate_ranking,
)
from needle_lib.metrics.overlap import OverlapTally, PairOverlap
from needle_lib.metrics.urls import normalize_url

__all__ = [
    "GAINS",
    "ULTIMATE",
    "LatencyStats",
    "MeanScore",
    "OverlapTally",
    "PairOverlap",
    "RatedResult",
    "dcg",
    "gain",
    "latency_stats",
    "mean_ndcg",
    "normalize_url",
    "penalized_gains",
    "percentile",
    "pooled_ratings",
    "query_ndcg",
    "ultimate_ranking",
]
