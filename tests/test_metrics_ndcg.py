"""Pooled nDCG@K: properties under hypothesis and a cross-check against ir_measures."""

from __future__ import annotations

import math
import re

import ir_measures
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needle_lib.metrics.ndcg import (
    GAINS,
    ULTIMATE,
    RatedResult,
    dcg,
    mean_ndcg,
    penalized_gains,
    pooled_ratings,
    query_ndcg,
    ultimate_ranking,
)
from needle_lib.metrics.urls import normalize_url

# URL spellings that normalise together exercise dedup across engines and within a list.
URLS = [f"https://site{i % 4}.example/page{i}" for i in range(8)]
SPELLINGS = st.sampled_from(URLS).flatmap(
    lambda u: st.sampled_from([u, u + "/", u.replace("https://", "http://www."), u + "#x"])
)
RATED = st.builds(RatedResult, SPELLINGS, st.integers(0, 4))
RANKINGS = st.dictionaries(
    st.sampled_from(["keenable", "exa", "google", "brave"]),
    st.lists(RATED, max_size=7),
    min_size=1,
    max_size=4,
)


def test_gain_table_matches_spec() -> None:
    assert GAINS == {4: 1.0, 3: 0.667, 2: 0.117, 1: 0.0, 0: 0.0}


def test_worked_example() -> None:
    rankings = {
        "a": [RatedResult("https://x.com/1", 2), RatedResult("https://x.com/2", 4)],
        "b": [RatedResult("https://x.com/3", 3)],
    }
    ideal = 1.0 + 0.667 / math.log2(3) + 0.117 / 2
    scores = query_ndcg(rankings, k=5)
    assert scores["a"] == pytest.approx((0.117 + 1.0 / math.log2(3)) / ideal)
    assert scores["b"] == pytest.approx(0.667 / ideal)
    assert scores[ULTIMATE] == 1.0


def test_duplicate_url_rates_zero_even_when_spelled_differently() -> None:
    results = [
        RatedResult("https://www.x.com/a/", 4),
        RatedResult("http://x.com/a?utm_source=feed", 4),
        RatedResult("https://x.com/b", 3),
    ]
    assert penalized_gains(results) == [1.0, 0.0, 0.667]


def test_site_query_results_sharing_a_host_are_not_penalised() -> None:
    results = [RatedResult(f"https://sec.gov/filing/{i}", 4) for i in range(3)]
    assert penalized_gains(results) == [1.0, 1.0, 1.0]


def test_nothing_relevant_excludes_the_query_from_means() -> None:
    nothing = query_ndcg({"a": [RatedResult("https://x.com", 1)], "b": []})
    assert nothing == {"a": None, "b": None, ULTIMATE: None}
    some = query_ndcg({"a": [RatedResult("https://x.com", 4)], "b": []})
    means = mean_ndcg([nothing, some])
    assert means["a"].mean == 1.0 and means["a"].num_scored == 1
    assert means["b"].mean == 0.0 and means["b"].num_scored == 1


def test_invalid_rating_is_a_clear_error() -> None:
    expected = re.escape("engine 'a', url 'https://x.com': rating 5 is not")
    with pytest.raises(ValueError, match=expected):
        query_ndcg({"a": [RatedResult("https://x.com", 5)]})


@given(RANKINGS, st.integers(1, 10))
def test_ndcg_in_unit_interval_and_ultimate_is_exactly_one(rankings, k) -> None:
    scores = query_ndcg(rankings, k=k)
    if scores[ULTIMATE] is None:
        assert all(v is None for v in scores.values())
        return
    assert scores[ULTIMATE] == 1.0
    for engine in rankings:
        assert 0.0 <= scores[engine] <= 1.0 + 1e-12


@given(st.lists(RATED, max_size=10), st.integers(1, 10))
def test_penalty_only_lowers_dcg(results, k) -> None:
    raw = [GAINS[r.rating] for r in results]
    assert dcg(penalized_gains(results), k) <= dcg(raw, k) + 1e-12


@given(st.lists(st.sampled_from(sorted(GAINS.values())), max_size=10), st.integers(1, 10))
def test_ideal_order_never_lowers_dcg(gains, k) -> None:
    assert dcg(sorted(gains, reverse=True), k) >= dcg(gains, k) - 1e-12


@given(RANKINGS)
def test_ultimate_is_pool_sorted_by_best_rating(rankings) -> None:
    pool = pooled_ratings(rankings)
    ideal = ultimate_ranking(rankings, k=len(pool) + 1)
    assert {r.url: r.rating for r in ideal} == pool
    assert [GAINS[r.rating] for r in ideal] == sorted((GAINS[r] for r in pool.values()),
                                                      reverse=True)


# --- cross-check against ir_measures --------------------------------------------------------
# pytrec_eval only accepts integer gains; nDCG is a ratio of two sums of the same gains, so
# scaling every gain by 1000 leaves it unchanged.
IR_GAINS = {rating: round(g * 1000) for rating, g in GAINS.items()}
NDCG5 = ir_measures.nDCG(gains=IR_GAINS) @ 5

DISTINCT = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 4)), max_size=8, unique_by=lambda t: t[0]
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["e1", "e2", "e3"]), DISTINCT, min_size=1, max_size=3))
def test_matches_ir_measures_with_pooled_qrels(raw) -> None:
    # Distinct URLs per list: a trec run cannot hold a document twice. A URL keeps one rating
    # across engines (the judge rates identical results once).
    rating_of = {}
    rankings = {}
    for engine, rows in raw.items():
        rankings[engine] = []
        for doc, rating in rows:
            rating_of.setdefault(doc, rating)
            rankings[engine].append(RatedResult(f"https://d{doc}.example/", rating_of[doc]))
    ours = query_ndcg(rankings, k=5)
    qrels = [ir_measures.Qrel("q", url, r) for url, r in pooled_ratings(rankings).items()]
    for engine, results in rankings.items():
        run = [
            ir_measures.ScoredDoc("q", normalize_url(r.url), float(len(results) - i))
            for i, r in enumerate(results)
        ]
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([NDCG5], qrels, run)}
        if ours[engine] is None:
            assert not any(GAINS[r] for r in pooled_ratings(rankings).values())
        else:
            assert ours[engine] == pytest.approx(theirs.get("q", 0.0), abs=1e-9)
