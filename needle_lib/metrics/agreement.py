"""Agreement between two raters and between two rankings: weighted κ and Kendall's τ-b.

Written here rather than imported: scipy and scikit-learn are not runtime dependencies, and
both statistics are a few lines over a 5×5 table or a dozen engines.

Cohen's weighted κ compares how far apart two raters' ratings are with how far apart they
would be by chance (each rater's own rating frequencies, independent of the other). On an
ordinal scale a 4-versus-0 disagreement is worse than 4 versus 3, so disagreements are
weighted by distance: *linear* weights (|i − j|) count every step alike, *quadratic*
weights ((i − j)²) make large disagreements dominate, which suits the Needs Met scale,
where only 3 and 4 carry much gain, and is the variant most often reported for graded
relevance judgements. Both are returned.

Kendall's τ-b counts engine pairs ordered alike (concordant) minus pairs ordered
differently (discordant), corrected for ties, so two engines tied in one ranking neither
agree nor disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

Weighting = Literal["linear", "quadratic"]


def confusion_matrix(pairs: Sequence[tuple[int, int]], categories: int) -> list[list[int]]:
    """Counts of (rating by A, rating by B): rows are A's rating, columns B's."""
    matrix = [[0] * categories for _ in range(categories)]
    for a, b in pairs:
        if not (0 <= a < categories and 0 <= b < categories):
            raise ValueError(f"rating pair {(a, b)} outside 0..{categories - 1}")
        matrix[a][b] += 1
    return matrix


def _weight(i: int, j: int, top: int, weighting: Weighting) -> float:
    distance = abs(i - j) / top
    return distance if weighting == "linear" else distance * distance


def weighted_kappa(matrix: Sequence[Sequence[int]], weighting: Weighting) -> float | None:
    """Cohen's weighted κ of a square confusion matrix; None when chance disagreement is 0
    (both raters used one and the same rating throughout: agreement is then no evidence)."""
    size = len(matrix)
    if size < 2 or any(len(row) != size for row in matrix):
        raise ValueError("weighted kappa needs a square matrix of at least 2 categories")
    total = sum(map(sum, matrix))
    if total == 0:
        return None
    rows = [sum(row) for row in matrix]
    cols = [sum(matrix[i][j] for i in range(size)) for j in range(size)]
    observed = expected = 0.0
    for i in range(size):
        for j in range(size):
            weight = _weight(i, j, size - 1, weighting)
            observed += weight * matrix[i][j] / total
            expected += weight * rows[i] * cols[j] / (total * total)
    return None if expected == 0 else 1.0 - observed / expected


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of paired values; None with fewer than two items or when either
    side is all ties (no order to agree with)."""
    if len(x) != len(y):
        raise ValueError(f"kendall tau of sequences of different lengths ({len(x)}, {len(y)})")
    concordant = discordant = tied_x = tied_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                tied_x += 1
            if dy == 0:
                tied_y += 1
            if dx and dy:
                if (dx > 0) == (dy > 0):
                    concordant += 1
                else:
                    discordant += 1
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return None if denominator == 0 else (concordant - discordant) / denominator
