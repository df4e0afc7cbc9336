"""Paired comparison of two recall runs on the targets both answered.

Two runs on the same targets are far more comparable than two leaderboard bars: per-target
difficulty cancels out. So the comparison keeps only targets valid in both runs, counts
per-target wins and losses, and puts a paired bootstrap interval on the difference.
It refuses runs that are not comparable at all (other corpus text, other scoring policy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypedDict

from needle_lib.contract.records import RecallCaseRecord
from needle_lib.contract.setup import request_knobs
from needle_lib.dashboard.runs import Run, lines_matched, lines_scored, stale_reasons
from needle_lib.errors import UsageError
from needle_lib.metrics.bootstrap import DEFAULT_SEED, Interval, paired_bootstrap_difference
from needle_lib.metrics.flips import Flip, Verdict, find_flips
from needle_lib.recall.results import PASSED


class ComparisonError(UsageError, ValueError):
    """Two runs that cannot be compared target by target."""


class ComparedRun(TypedDict):
    """One side of ``needle compare --json`` (recall)."""

    path: str
    label: str
    matched_pct: float
    pass_rate: float


class CaseRatio(TypedDict):
    case_id: str
    a_ratio: float
    b_ratio: float


class PairedJSON(TypedDict):
    """``needle compare --json`` of two recall runs (B − A)."""

    a: ComparedRun
    b: ComparedRun
    corpus: str
    shared_targets: int
    only_a: list[str]
    only_b: list[str]
    excluded: list[str]
    wins: int
    losses: int
    ties: int
    matched_pct_diff: dict[str, float]
    pass_rate_diff: dict[str, float]
    cases: list[CaseRatio]
    flips: list[dict[str, str]]
    warnings: list[str]


@dataclass(frozen=True)
class CaseDiff:
    case_id: str
    a_ratio: float
    b_ratio: float

    @property
    def delta(self) -> float:
        return self.b_ratio - self.a_ratio


@dataclass(frozen=True)
class PairedComparison:
    """B relative to A on their shared valid targets; differences are B − A in points."""

    a: Run
    b: Run
    cases: list[CaseDiff]
    only_a: list[str]
    only_b: list[str]
    excluded: list[str]
    a_matched_pct: float
    b_matched_pct: float
    matched_diff: Interval
    a_pass_rate: float
    b_pass_rate: float
    pass_diff: Interval
    warnings: list[str]
    #: Shared valid targets whose verdict changed, pass → fail first.
    flips: list[Flip]

    @property
    def wins(self) -> int:
        return sum(c.delta > 0 for c in self.cases)

    @property
    def losses(self) -> int:
        return sum(c.delta < 0 for c in self.cases)

    @property
    def ties(self) -> int:
        return sum(c.delta == 0 for c in self.cases)

    def to_json(self) -> PairedJSON:
        return {
            "a": {"path": str(self.a.path), "label": self.a.label,
                  "matched_pct": self.a_matched_pct, "pass_rate": self.a_pass_rate},
            "b": {"path": str(self.b.path), "label": self.b.label,
                  "matched_pct": self.b_matched_pct, "pass_rate": self.b_pass_rate},
            "corpus": self.a.corpus,
            "shared_targets": len(self.cases),
            "only_a": self.only_a,
            "only_b": self.only_b,
            "excluded": self.excluded,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "matched_pct_diff": self.matched_diff.to_json(),
            "pass_rate_diff": self.pass_diff.to_json(),
            "cases": [{"case_id": c.case_id, "a_ratio": c.a_ratio, "b_ratio": c.b_ratio}
                      for c in self.cases],
            "flips": [flip.to_json() for flip in self.flips],
            "warnings": self.warnings,
        }


def _check_comparable(a: Run, b: Run) -> list[str]:
    """Raise when the runs cannot be paired; return warnings when they can, with caveats."""
    if a.dump["corpus"]["sha256"] != b.dump["corpus"]["sha256"]:
        raise ComparisonError(
            f"corpora differ: {a.path.name} ran on {a.corpus} "
            f"(sha256 {a.dump['corpus']['sha256'][:12]}…), {b.path.name} on {b.corpus} "
            f"(sha256 {b.dump['corpus']['sha256'][:12]}…); targets are not the same text")
    if a.cohort.policy != b.cohort.policy:
        raise ComparisonError(
            f"scoring policies differ: {a.path.name} is {a.cohort.policy}, {b.path.name} is "
            f"{b.cohort.policy}; rescore one with `needle rescore` under the other's policy")
    warnings = []
    for key, version_a, version_b in (
            ("prompt_version", a.dump["prompt_version"], b.dump["prompt_version"]),
            ("scorer_version", a.dump["scorer_version"], b.dump["scorer_version"])):
        if version_a != version_b:
            warnings.append(f"{key} differs: {version_a!r} (A) vs {version_b!r} (B)"
                            "; the runs may not have seen the same prompt or rules")
    for side, run in (("A", a), ("B", b)):
        stale = stale_reasons(run.dump)
        if stale:
            warnings.append(f"{side} ({run.path.name}) is stale: {'; '.join(stale)}")
        if run.status:
            warnings.append(f"{side} ({run.path.name}) is {run.status}")
    return warnings


def _ratio(case: RecallCaseRecord) -> float:
    scored = lines_scored(case)
    return lines_matched(case) / scored if scored else 0.0


def _verdict(case: RecallCaseRecord) -> Verdict:
    """A target's verdict and its score as ``12/20 lines (60 %)``."""
    return Verdict(case["outcome"] == PASSED,
                   f"{case['matched']}/{case['scored']} lines ({100 * _ratio(case):.0f} %)")


def _pct(numerators: list[float], denominators: list[float]) -> float:
    total = sum(denominators)
    return 100 * sum(numerators) / total if total else 0.0


def compare_runs(a: Run, b: Run, *, seed: int = DEFAULT_SEED) -> PairedComparison:
    """Pair ``a`` and ``b`` by case_id over targets valid in both (B − A)."""
    warnings = _check_comparable(a, b)
    valid_a = {c["case_id"]: c for c in a.valid_cases}
    valid_b = {c["case_id"]: c for c in b.valid_cases}
    ids_a = {c["case_id"] for c in a.cases}
    ids_b = {c["case_id"] for c in b.cases}
    shared = [c["case_id"] for c in a.cases if c["case_id"] in valid_a and c["case_id"] in valid_b]
    if not shared:
        raise ComparisonError(
            f"no target is valid in both {a.path.name} and {b.path.name} "
            f"({len(valid_a)} and {len(valid_b)} valid targets)")
    sides = ([valid_a[i] for i in shared], [valid_b[i] for i in shared])
    matched = [[float(lines_matched(c)) for c in side] for side in sides]
    scored = [[float(lines_scored(c)) for c in side] for side in sides]
    passes = [[float(c["outcome"] == PASSED) for c in side] for side in sides]
    ones = [1.0] * len(shared)
    return PairedComparison(
        a=a, b=b,
        cases=[CaseDiff(ca["case_id"], _ratio(ca), _ratio(cb)) for ca, cb in zip(*sides,
                                                                               strict=True)],
        only_a=sorted(ids_a - ids_b),
        only_b=sorted(ids_b - ids_a),
        excluded=sorted((ids_a & ids_b) - set(shared)),
        a_matched_pct=_pct(matched[0], scored[0]),
        b_matched_pct=_pct(matched[1], scored[1]),
        matched_diff=paired_bootstrap_difference(matched[0], scored[0], matched[1], scored[1],
                                                 seed=seed).scaled(100),
        a_pass_rate=_pct(passes[0], ones),
        b_pass_rate=_pct(passes[1], ones),
        pass_diff=paired_bootstrap_difference(passes[0], ones, passes[1], ones,
                                              seed=seed).scaled(100),
        warnings=warnings,
        flips=find_flips({i: _verdict(c) for i, c in zip(shared, sides[0], strict=True)},
                         {i: _verdict(c) for i, c in zip(shared, sides[1], strict=True)}),
    )


def knob_differences(a: Run, b: Run) -> dict[str, tuple[Any, Any]]:
    """The request knobs on which two runs differ (bookkeeping such as a base URL aside)."""
    return request_knobs(a.request, b.request)


def model_family(model_id: Any) -> str:
    """Leading token of a model id (``qwen3.6-27b-mlx`` → ``qwen3.6``), ignoring any org/."""
    return re.split(r"[-_:\s]", str(model_id).rsplit("/", 1)[-1].lower(), maxsplit=1)[0]


def one_knob_pairs(runs: list[Run]) -> list[tuple[Run, Run, str, tuple[Any, Any]]]:
    """Pairs of runs in one cohort whose request differs in exactly one knob.

    Two quantisations of one model differ only in the served model id; a ``--think`` run
    differs only in ``suppress_thinking``. Such a pair is a controlled experiment, so the
    dashboard shows it side by side. When the one knob is the model id itself, both ids must
    name the same family, or every pair of unrelated models run with default settings would
    pass for a controlled experiment. Returns (A, B, knob, (value A, value B)).
    """
    pairs = []
    for a, b in combinations(sorted(runs, key=lambda r: (r.label, str(r.path))), 2):
        if a.cohort != b.cohort:
            continue
        diffs = knob_differences(a, b)
        if len(diffs) != 1:
            continue
        ((knob, values),) = diffs.items()
        if knob == "model" and model_family(values[0]) != model_family(values[1]):
            continue
        pairs.append((a, b, knob, values))
    return pairs
