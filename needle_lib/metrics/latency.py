"""Latency summaries per engine.

Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, numpy's
default): p = x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]) with h = (n − 1)·q on sorted samples.
It is defined for any n ≥ 1 and reproducible by anyone with numpy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyStats:
    n: int
    mean: float | None
    p50: float | None
    p95: float | None


def percentile(sorted_samples: Sequence[float], q: float) -> float:
    """Type-7 percentile of already sorted, non-empty samples; ``q`` in [0, 1]."""
    if not sorted_samples:
        raise ValueError("percentile of no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    h = (len(sorted_samples) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(sorted_samples) - 1)
    return sorted_samples[low] + (h - low) * (sorted_samples[high] - sorted_samples[low])


def latency_stats(samples: Iterable[float]) -> LatencyStats:
    """n, mean, p50, p95 of latency samples in seconds (all None when there are none)."""
    ordered = sorted(samples)
    if any(s < 0 or math.isnan(s) for s in ordered):
        raise ValueError("latency samples must be non-negative numbers")
    if not ordered:
        return LatencyStats(0, None, None, None)
    return LatencyStats(
        n=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=percentile(ordered, 0.5),
        p95=percentile(ordered, 0.95),
    )
