"""CI gates over finished recall dumps: minimum score, minimum pass rate, no regressions.

A gate judges a run's quality, so a run that is invalid (any infrastructure error) or did
not finish never passes one: its percentages describe a subset of the cases, not the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from needle_lib.contract.records import RecallDump
from needle_lib.recall.results import PASSED


@dataclass(frozen=True)
class GateSettings:
    min_score: float | None = None  # fraction of scored lines matched, 0..1
    min_pass_rate: float | None = None  # fraction of valid cases passed, 0..1
    baseline: RecallDump | None = None
    max_drop: float = 1.0  # percentage points of matched % allowed below the baseline

    @property
    def active(self) -> bool:
        return self.min_score is not None or self.min_pass_rate is not None or (
            self.baseline is not None
        )


def _name(dump: RecallDump) -> str:
    return f"{dump['corpus']['name']}__{dump['model']['key']}"


def _fraction(pct: float | None) -> str:
    return "n/a" if pct is None else f"{pct / 100:.3f}"


def check_gates(dumps: Sequence[RecallDump], settings: GateSettings) -> list[str]:
    """One line per failed gate (empty when every gate passes)."""
    if not settings.active:
        return []
    failures: list[str] = []
    for dump in dumps:
        name, summary = _name(dump), dump["summary"]
        if not dump["valid"] or not dump["complete"]:
            state = "invalid (infrastructure errors)" if not dump["valid"] else "incomplete"
            failures.append(f"gate: {name} is {state}; an invalid or incomplete run passes no gate")
            continue
        score, rate = summary["matched_pct"], summary["pass_rate"]
        if settings.min_score is not None and (
            score is None or score / 100 < settings.min_score
        ):
            failures.append(
                f"gate --min-score: {name} matched {_fraction(score)} of scored lines "
                f"< {settings.min_score:.3f}"
            )
        if settings.min_pass_rate is not None and (
            rate is None or rate / 100 < settings.min_pass_rate
        ):
            failures.append(
                f"gate --min-pass-rate: {name} passed {_fraction(rate)} of valid cases "
                f"< {settings.min_pass_rate:.3f}"
            )
        if settings.baseline is not None:
            failures.extend(_baseline_failures(dump, settings.baseline, settings.max_drop))
    return failures


def _baseline_failures(
    dump: RecallDump, baseline: RecallDump, max_drop: float
) -> list[str]:
    if baseline["corpus"]["name"] != dump["corpus"]["name"]:
        return []  # the baseline speaks about another corpus
    name = _name(dump)
    now = {c["case_id"]: c for c in dump["cases"]}
    regressed = sorted(
        case_id
        for case_id, case in ((c["case_id"], c) for c in baseline["cases"])
        if case["outcome"] == PASSED and case_id in now and now[case_id]["outcome"] != PASSED
    )
    failures = []
    if regressed:
        failures.append(
            f"gate --baseline: {name}: {len(regressed)} case(s) passed in the baseline and "
            f"fail now: {', '.join(regressed)}"
        )
    before, after = baseline["summary"].get("matched_pct"), dump["summary"]["matched_pct"]
    if before is not None and after is not None and before - after > max_drop:
        failures.append(
            f"gate --baseline: {name}: matched {after:.1f}% vs baseline {before:.1f}% "
            f"(drop {before - after:.1f} points > --max-drop {max_drop:g})"
        )
    return failures
