"""Percentile bootstrap intervals: ratio of sums, proportions and paired differences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needle_lib.metrics.bootstrap import (
    Interval,
    bootstrap_proportion,
    bootstrap_ratio,
    paired_bootstrap_difference,
)

cases = st.lists(
    st.integers(min_value=1, max_value=30).flatmap(
        lambda scored: st.tuples(st.integers(min_value=0, max_value=scored), st.just(scored))),
    min_size=1, max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(cases, st.integers(min_value=0, max_value=10_000))
def test_interval_contains_the_ratio_of_sums(data, seed):
    matched, scored = zip(*data, strict=True)
    interval = bootstrap_ratio(matched, scored, resamples=300, seed=seed)
    assert interval.estimate == sum(matched) / sum(scored)
    assert 0 <= interval.low <= interval.estimate <= interval.high <= 1


def test_ratio_of_sums_is_not_a_mean_of_ratios():
    # 1/1 and 0/9: mean of ratios is 50 %, but 1 of 10 scored lines matched.
    assert bootstrap_ratio([1, 0], [1, 9], resamples=50).estimate == pytest.approx(0.1)


@pytest.mark.parametrize("matched, scored", [([5, 8, 3], [5, 8, 3]), ([0, 0], [7, 4]),
                                             ([5, 8], [10, 16])])
def test_degenerate_data_gives_a_zero_width_interval(matched, scored):
    interval = bootstrap_ratio(matched, scored, resamples=200)
    assert interval.low == interval.estimate == interval.high


def test_all_passed_is_a_zero_width_proportion():
    assert bootstrap_proportion([True] * 6, resamples=200) == Interval(1.0, 1.0, 1.0)


def test_smaller_samples_give_wider_intervals():
    small = bootstrap_proportion([True, False] * 4, seed=7)
    large = bootstrap_proportion([True, False] * 40, seed=7)
    assert small.estimate == large.estimate == 0.5
    assert small.high - small.low > large.high - large.low


def test_known_case_matches_a_hand_computation():
    # n = 4 cases, one pass. A resample's pass count is Binomial(4, 1/4):
    # P(0 passes) = (3/4)^4 ≈ 0.316 > 2.5 %, so the lower bound is 0;
    # P(≥ 3 passes) ≈ 0.051 > 2.5 % but P(4 passes) ≈ 0.004 < 2.5 %, so the upper bound is 3/4.
    interval = bootstrap_proportion([False, False, False, True], resamples=4000, seed=3)
    assert (interval.estimate, interval.low, interval.high) == (0.25, 0.0, 0.75)


def test_same_seed_same_interval():
    data = ([3, 9, 1, 7, 0, 5], [10, 10, 4, 8, 6, 5])
    assert bootstrap_ratio(*data, seed=11) == bootstrap_ratio(*data, seed=11)
    assert bootstrap_ratio(*data, seed=11) != bootstrap_ratio(*data, seed=12)


def test_identical_paired_runs_give_zero_interval():
    matched, scored = [3, 9, 1, 7, 0, 5], [10, 10, 4, 8, 6, 5]
    interval = paired_bootstrap_difference(matched, scored, matched, scored)
    assert (interval.estimate, interval.low, interval.high) == (0.0, 0.0, 0.0)


def test_paired_difference_is_b_minus_a():
    a = ([2, 2, 2, 2], [4, 4, 4, 4])
    b = ([4, 3, 4, 3], [4, 4, 4, 4])
    interval = paired_bootstrap_difference(*a, *b, resamples=500)
    assert interval.estimate == pytest.approx(0.375)
    assert 0.25 <= interval.low <= interval.estimate <= interval.high <= 0.5


def test_pairing_removes_shared_target_difficulty():
    # B is A plus one line on every target; targets vary wildly in difficulty.
    a_matched, scored = [0, 9, 2, 8, 1, 7], [10] * 6
    b_matched = [m + 1 for m in a_matched]
    paired = paired_bootstrap_difference(a_matched, scored, b_matched, scored)
    unpaired_b = bootstrap_ratio(b_matched, scored)
    assert paired.low == pytest.approx(0.1) and paired.high == pytest.approx(0.1)
    assert unpaired_b.high - unpaired_b.low > 0.2


def test_scaled_interval_is_in_percent():
    assert Interval(0.5, 0.25, 0.75).scaled(100) == Interval(50.0, 25.0, 75.0)


def test_resamples_with_no_scored_lines_are_dropped():
    # Only one case carries scored lines; a resample without it has no ratio and is skipped
    # instead of counting as 0 %.
    interval = bootstrap_ratio([3, 0], [3, 0], resamples=200)
    assert interval == Interval(1.0, 1.0, 1.0)


@pytest.mark.parametrize("call, message", [
    (lambda: bootstrap_ratio([], []), "no cases"),
    (lambda: bootstrap_ratio([1, 2], [3]), "differ in length"),
    (lambda: bootstrap_ratio([0, 0], [0, 0]), "zero denominator"),
    (lambda: bootstrap_proportion([True], confidence=1.0), "confidence"),
])
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
