"""Flipped cases: which verdicts changed between two runs, regressions first."""

from __future__ import annotations

from needle_lib.metrics.bootstrap import resample
from needle_lib.metrics.flips import Verdict, find_flips, flip_lines

PASS, FAIL = Verdict(True, "20/20"), Verdict(False, "0/20")


def test_only_cases_decided_in_both_can_flip_and_regressions_come_first():
    a = {"t1": FAIL, "t2": PASS, "t3": PASS, "t4": FAIL, "only_a": PASS}
    b = {"t4": PASS, "t3": PASS, "t2": FAIL, "t1": PASS, "only_b": FAIL}
    flips = find_flips(a, b)
    assert [(f.key, f.direction) for f in flips] == [
        ("t2", "pass → fail"), ("t1", "fail → pass"), ("t4", "fail → pass")]
    assert flips[0].to_json() == {"case": "t2", "direction": "pass → fail",
                                  "a_score": "20/20", "b_score": "0/20"}


def test_the_listing_counts_each_direction_and_carries_notes():
    flips = find_flips({"a": PASS, "bb": FAIL}, {"a": FAIL, "bb": PASS})
    assert flip_lines(flips, "targets", {"bb": "'query'"}) == [
        "flipped targets: 2 (1 pass → fail, 1 fail → pass)",
        "  pass → fail  a   A 20/20  →  B 0/20",
        "  fail → pass  bb  A 0/20  →  B 20/20  · 'query'"]
    assert flip_lines([], "cases") == ["flipped cases: none"]


def test_resample_gives_sorted_reproducible_draws_without_undefined_ones():
    values = [1.0, 2.0, 3.0]

    def mean_unless_all_ones(indices):
        picked = [values[i] for i in indices]
        return None if set(picked) == {1.0} else sum(picked) / len(picked)

    draws = resample(mean_unless_all_ones, 3, resamples=500, seed=7)
    assert draws == sorted(draws) == resample(mean_unless_all_ones, 3, resamples=500, seed=7)
    assert 450 < len(draws) < 500 and 1.0 not in draws  # P(all three are 1.0) = 1/27
