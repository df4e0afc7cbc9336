"""Ranking metrics: pooled nDCG@K, known-item recall/MRR, latency, engine overlap."""

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
from needle_lib.metrics.overlap import PairOverlap, pairwise_overlap, unique_urls
from needle_lib.metrics.recall import first_hit_rank, gold_id_matcher, mrr_at_k, recall_at_k
from needle_lib.metrics.urls import normalize_url

__all__ = [
    "GAINS",
    "ULTIMATE",
    "LatencyStats",
    "MeanScore",
    "PairOverlap",
    "RatedResult",
    "dcg",
    "first_hit_rank",
    "gain",
    "gold_id_matcher",
    "latency_stats",
    "mean_ndcg",
    "mrr_at_k",
    "normalize_url",
    "pairwise_overlap",
    "penalized_gains",
    "percentile",
    "pooled_ratings",
    "query_ndcg",
    "recall_at_k",
    "ultimate_ranking",
    "unique_urls",
]
