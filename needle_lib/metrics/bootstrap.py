"""Percentile bootstrap confidence intervals for recall figures, single-run and paired.

A recall run asks about 10-20 targets, so a leaderboard gap of a few points can be noise.
Resampling *targets* (not lines) with replacement respects that lines of one target succeed
or fail together. Matched % is a ratio of sums (Σmatched / Σscored), not a mean of per-target
ratios, so the resampled statistic is the same ratio of sums. Paired differences resample one
set of target indices for both runs, which cancels per-target difficulty out of the interval.

Seeded ``random.Random`` keeps every interval reproducible (a rebuilt dashboard shows the same
bars) without numpy, which is not a dependency.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from needle_lib.metrics.latency import percentile

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 1729
DEFAULT_CONFIDENCE = 0.95

Statistic = Callable[[Sequence[int]], float | None]
K = TypeVar("K")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile-bootstrap interval, in the data's own units."""

    estimate: float
    low: float
    high: float
    confidence: float = DEFAULT_CONFIDENCE

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. ``100`` for percentages)."""
        return Interval(self.estimate * factor, self.low * factor, self.high * factor,
                        self.confidence)

    def to_json(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high,
                "confidence": self.confidence}


def _ratio(numerators: Sequence[float], denominators: Sequence[float]) -> Statistic:
    def statistic(indices: Sequence[int]) -> float | None:
        total = sum(denominators[i] for i in indices)
        return sum(numerators[i] for i in indices) / total if total else None
    return statistic


def _check_lengths(*columns: Sequence[float]) -> int:
    lengths = {len(column) for column in columns}
    if len(lengths) != 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)}")
    n = lengths.pop()
    if n == 0:
        raise ValueError("bootstrap of no cases")
    return n


def resample(statistic: Statistic, n: int, *, resamples: int = DEFAULT_RESAMPLES,
             seed: int = DEFAULT_SEED) -> list[float]:
    """The statistic on ``resamples`` draws of ``n`` case indices with replacement, sorted;
    draws where it is undefined (None) are left out. For statistics whose interval is not
    a pair of interpolated percentiles (one that takes a few discrete values, say)."""
    rng = random.Random(seed)
    population = range(n)
    draws = []
    for _ in range(resamples):
        value = statistic(rng.choices(population, k=n))
        if value is not None:
            draws.append(value)
    return sorted(draws)


def _bootstrap(statistic: Statistic, n: int, *, resamples: int, seed: int,
               confidence: float) -> Interval:
    """Resample ``n`` case indices ``resamples`` times and take the central percentiles.

    Resamples whose statistic is undefined (every drawn case has a zero denominator) are
    dropped: they carry no information about the ratio, and counting them as zero would bias
    the interval downwards.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    estimate = statistic(range(n))
    if estimate is None:
        raise ValueError("statistic undefined on the full sample (zero denominator)")
    draws = resample(statistic, n, resamples=resamples, seed=seed)
    alpha = (1 - confidence) / 2
    return Interval(estimate, percentile(draws, alpha), percentile(draws, 1 - alpha), confidence)


def bootstrap_statistic(statistic: Statistic, n: int, *,
                        resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                        confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Interval for any statistic of ``n`` cases, computed from the indices of a resample
    (e.g. an agreement between two rankings built from the drawn queries)."""
    if n < 1:
        raise ValueError("bootstrap of no cases")
    return _bootstrap(statistic, n, resamples=resamples, seed=seed, confidence=confidence)


def bootstrap_ratio(numerators: Sequence[float], denominators: Sequence[float], *,
                    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Interval for Σnumerators / Σdenominators (matched % as a fraction) over cases."""
    n = _check_lengths(numerators, denominators)
    return _bootstrap(_ratio(numerators, denominators), n, resamples=resamples, seed=seed,
                      confidence=confidence)


def bootstrap_proportion(successes: Sequence[bool], *, resamples: int = DEFAULT_RESAMPLES,
                         seed: int = DEFAULT_SEED,
                         confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Interval for the share of successes (pass rate as a fraction) over cases."""
    return bootstrap_ratio([float(s) for s in successes], [1.0] * len(successes),
                           resamples=resamples, seed=seed, confidence=confidence)


def paired_bootstrap_difference(
    a_numerators: Sequence[float], a_denominators: Sequence[float],
    b_numerators: Sequence[float], b_denominators: Sequence[float], *,
    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """Interval for ratio(B) − ratio(A) over the same cases, resampled jointly.

    Case ``i`` of A and case ``i`` of B must be the same target; the caller aligns them.
    A proportion is the ratio with numerators 0/1 and denominators 1.
    """
    n = _check_lengths(a_numerators, a_denominators, b_numerators, b_denominators)
    ratio_a = _ratio(a_numerators, a_denominators)
    ratio_b = _ratio(b_numerators, b_denominators)

    def difference(indices: Sequence[int]) -> float | None:
        a, b = ratio_a(indices), ratio_b(indices)
        return None if a is None or b is None else b - a

    return _bootstrap(difference, n, resamples=resamples, seed=seed, confidence=confidence)


def cluster_bootstrap_means(
    series: Mapping[K, Sequence[tuple[Hashable, float]]], *,
    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[K, Interval | None]:
    """Per series, the mean of its cells with a percentile interval from resampling whole
    *clusters* of cells (e.g. all of one query's runs, or all of one run's queries).

    Cells of one cluster are not independent — one hard query is hard in every run, one bad
    hour hurts every query — so resampling cells would understate the uncertainty; a
    cluster is drawn or not as a whole. The statistic is a ratio of sums (Σ values / cells
    drawn), so a cluster with more scored cells weighs more, as in the point estimate.
    Every series is resampled with the same cluster draws (the union of their clusters; a
    cluster a series has no cell in adds nothing to it), so series are compared on the same
    resamples, and the draws are made once, not once per series. A series with fewer than
    two clusters of its own has no interval (None): one cluster cannot show any spread.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    labels = sorted({cluster for cells in series.values() for cluster, _ in cells}, key=repr)
    index = {label: i for i, label in enumerate(labels)}
    sums: dict[K, tuple[list[float], list[float]]] = {}
    for key, cells in series.items():
        if len({cluster for cluster, _ in cells}) < 2:
            continue
        total, count = [0.0] * len(labels), [0.0] * len(labels)
        for cluster, value in cells:
            total[index[cluster]] += value
            count[index[cluster]] += 1
        sums[key] = (total, count)
    draws: dict[K, list[float]] = {key: [] for key in sums}
    rng = random.Random(seed)
    population = range(len(labels))
    for _ in range(resamples if sums else 0):
        picks = rng.choices(population, k=len(labels))
        for key, (total, count) in sums.items():
            drawn = sum(map(count.__getitem__, picks))
            if drawn:
                draws[key].append(sum(map(total.__getitem__, picks)) / drawn)
    alpha = (1 - confidence) / 2
    intervals: dict[K, Interval | None] = {}
    for key, cells in series.items():
        if key not in sums:
            intervals[key] = None
            continue
        values = sorted(draws[key])
        estimate = sum(v for _, v in cells) / len(cells)
        intervals[key] = Interval(estimate, percentile(values, alpha),
                                  percentile(values, 1 - alpha), confidence)
    return intervals
