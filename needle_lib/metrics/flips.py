"""Flipped cases: the items whose verdict changed between two runs of the same cases.

A paired statistic says *how much* B differs from A; a reviewer's next question is *which*
cases moved. Flips are listed pass → fail first (regressions are what blocks an upgrade),
then fail → pass, each group in A's case order, so two comparisons of the same runs list
the same flips in the same order. Only cases decided in both runs can flip: an error or a
skip says nothing about quality.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

REGRESSION = "pass → fail"
IMPROVEMENT = "fail → pass"


@dataclass(frozen=True)
class Verdict:
    """One decided case: passed or not, and its score as a reader wants to see it."""

    passed: bool
    score: str


@dataclass(frozen=True)
class Flip:
    """A case whose verdict changed from A to B, with both scores."""

    key: str
    a: Verdict
    b: Verdict

    @property
    def direction(self) -> str:
        return REGRESSION if self.a.passed else IMPROVEMENT

    def to_json(self) -> dict[str, str]:
        return {"case": self.key, "direction": self.direction,
                "a_score": self.a.score, "b_score": self.b.score}


def find_flips(a: Mapping[str, Verdict], b: Mapping[str, Verdict]) -> list[Flip]:
    """Cases decided in both ``a`` and ``b`` whose verdict differs, regressions first."""
    changed = [Flip(key, verdict, b[key]) for key, verdict in a.items()
               if key in b and b[key].passed != verdict.passed]
    return sorted(changed, key=lambda flip: not flip.a.passed)  # stable: A's order within


def flip_lines(flips: list[Flip], what: str,
               notes: Mapping[str, str] | None = None) -> list[str]:
    """The plain-text listing ``needle compare`` prints: a count, then a line per flip
    (ending with its note, e.g. a search case's query text, where ``notes`` has one)."""
    notes = notes or {}
    if not flips:
        return [f"flipped {what}: none"]
    down = sum(f.a.passed for f in flips)
    width = max(len(f.key) for f in flips)
    return [f"flipped {what}: {len(flips)} ({down} {REGRESSION}, {len(flips) - down} "
            f"{IMPROVEMENT})",
            *(f"  {f.direction}  {f.key:<{width}}  A {f.a.score}  →  B {f.b.score}"
              + (f"  · {notes[f.key]}" if f.key in notes else "") for f in flips)]
