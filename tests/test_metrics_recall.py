"""Known-item recall@K / MRR@K, latency stats, engine overlap and uniqueness."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.metrics import (
    first_hit_rank,
    gold_id_matcher,
    latency_stats,
    mrr_at_k,
    pairwise_overlap,
    percentile,
    recall_at_k,
    unique_urls,
)

RESULTS = [
    {"url": "https://a.org", "ids": ["doi:10.1/x"]},
    {"url": "https://arxiv.org/abs/2501.00001", "ids": ["arXiv:2501.00001"]},
    {"url": "https://c.org", "ids": []},
]


def _is_gold(result: dict) -> bool:
    return "arxiv" in result["url"]


def test_recall_and_mrr_with_a_predicate() -> None:
    assert first_hit_rank(RESULTS, _is_gold, k=5) == 2
    assert recall_at_k(RESULTS, _is_gold, k=2) == 1.0
    assert recall_at_k(RESULTS, _is_gold, k=1) == 0.0
    assert mrr_at_k(RESULTS, _is_gold, k=5) == 0.5
    assert mrr_at_k(RESULTS, _is_gold, k=1) == 0.0


def test_gold_id_match_is_case_insensitive() -> None:
    matcher = gold_id_matcher(["ARXIV:2501.00001"], lambda r: r["ids"])
    assert mrr_at_k(RESULTS, matcher, k=3) == 0.5
    with pytest.raises(ValueError, match="at least one non-empty gold id"):
        gold_id_matcher([" "], lambda r: r["ids"])


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall_at_k(RESULTS, _is_gold, k=0)


@given(st.lists(st.booleans(), max_size=12), st.integers(1, 12))
def test_mrr_never_exceeds_recall(hits: list[bool], k: int) -> None:
    is_hit = bool
    assert 0.0 <= mrr_at_k(hits, is_hit, k) <= recall_at_k(hits, is_hit, k) <= 1.0


def test_latency_stats_type7_percentiles() -> None:
    stats = latency_stats([4.0, 1.0, 3.0, 2.0])
    assert (stats.n, stats.mean, stats.p50) == (4, 2.5, 2.5)
    assert stats.p95 == pytest.approx(3.85)
    assert latency_stats([]).mean is None
    assert latency_stats([0.7]).p95 == 0.7


@given(st.lists(st.floats(0, 100), min_size=1, max_size=30))
def test_percentiles_bounded_and_ordered(samples: list[float]) -> None:
    ordered = sorted(samples)
    stats = latency_stats(samples)
    assert ordered[0] <= stats.p50 <= stats.p95 <= ordered[-1]
    assert percentile(ordered, 0.0) == ordered[0] and percentile(ordered, 1.0) == ordered[-1]


def test_negative_latency_is_rejected() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        latency_stats([1.0, -0.1])


PER_QUERY = [
    {
        "a": ["https://x.com/1", "https://www.x.com/2/"],
        "b": ["http://x.com/2", "https://y.com"],
        "ultimate": ["https://x.com/1", "https://x.com/2", "https://y.com"],
    },
    {"a": [], "b": []},
    {"a": ["https://z.com"], "c": ["https://z.com"]},
]


def test_pairwise_overlap_excludes_ultimate_and_empty_pairs() -> None:
    overlap = pairwise_overlap(PER_QUERY)
    assert set(overlap) == {("a", "b"), ("a", "c")}
    assert overlap[("a", "b")].mean_jaccard == pytest.approx(1 / 3)
    assert overlap[("a", "b")].mean_shared == 1.0
    assert overlap[("a", "b")].num_queries == 1
    assert overlap[("a", "c")].mean_jaccard == 1.0


def test_unique_urls_found_by_no_other_engine() -> None:
    assert unique_urls(PER_QUERY) == {"a": 1, "b": 1, "c": 0}
