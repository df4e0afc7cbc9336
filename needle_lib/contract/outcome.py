"""A case's outcome, decided by one function whichever command computes it.

The live run, ``needle rescore``, ``needle merge`` and ``--resume`` all turn a score into an
outcome here, so a case's verdict never depends on which of them computed it (rescore once
called a window with nothing to score FAILED while the live run SKIPPED it).

A *policy skip* — the answer was received but the scoring policy leaves nothing to score
(a docstring-only window under ``--no-comments``) — is a verdict, not a missing case: the
case was asked and answered, so it does not make a run incomplete, and a rescore under
another policy can score it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    """pytest's outcomes, as a case record stores them (``"passed"`` …) in dumps and reports."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


#: The outcomes that are quality results: what percentages, gates and comparisons count.
SCORED = frozenset({Outcome.PASSED, Outcome.FAILED})

#: The skip reason of a window with nothing to score under the policy.
NOTHING_TO_SCORE = "no scoreable lines in this window under the current scoring policy"


def is_scored(outcome: object) -> bool:
    """Whether ``outcome`` is a quality result (PASSED or FAILED)."""
    return outcome in SCORED


def is_skipped(outcome: object) -> bool:
    """Whether ``outcome`` is SKIPPED (a policy skip, or a case never asked: folds count
    both as skipped, and a run with a case never asked is not complete)."""
    return outcome == Outcome.SKIPPED


def pass_fail(passed: bool) -> Outcome:
    """PASSED or FAILED: the verdict of a case that had something to score (a pooled
    ``ultimate`` row, say, whose verdict is whether any engine hit)."""
    return Outcome.PASSED if passed else Outcome.FAILED


def scored_outcome(scored: int, passed: bool) -> Outcome:
    """The verdict of an answered case: SKIPPED when the policy leaves nothing to score,
    else PASSED or FAILED by the case's own pass rule (recall: the 40 % threshold; search:
    a relevant result or the gold in the top K)."""
    if scored == 0:
        return Outcome.SKIPPED
    return pass_fail(passed)


def case_outcome(case: Mapping[str, Any]) -> Outcome | None:
    """The verdict a recorded case's own score gives, or None when it holds no score (it was
    never answered, or it errored before it was scored)."""
    scored = case.get("scored")
    if not isinstance(scored, int) or isinstance(scored, bool):
        return None
    return scored_outcome(scored, bool(case.get("passed")))


def is_policy_skip(case: Mapping[str, Any]) -> bool:
    """A skipped case that was answered but had nothing to score under the policy."""
    return case.get("outcome") == Outcome.SKIPPED and case_outcome(case) is Outcome.SKIPPED


def is_answered(case: Mapping[str, Any]) -> bool:
    """Asked and answered: a quality result or a policy skip (what ``--resume`` keeps, for
    recall and search alike, and what makes a run complete); errors and skips for other
    reasons (fail-fast, a missing key, no judge) are not: none measured the model or
    engine, so a resumed run asks them again."""
    return is_scored(case.get("outcome")) or is_policy_skip(case)


def report_outcome(when: str, report_passed: bool, report_skipped: bool,
                   decided: Outcome | None) -> Outcome | None:
    """The outcome a pytest report phase settles for a case, or None when a later phase
    settles it.

    ``decided`` is the verdict the case's benchmark decided in setup once it was answered
    and scored (``kernel.benchmark.CaseVerdict``), which the test body asserts: the outcome
    is decided once, there. A setup failure is infrastructure (ERROR); a call that fails
    without a verdict, or fails though its verdict is a pass, crashed (ERROR, not a quality
    result); otherwise the call settles the verdict.
    """
    if when == "setup":
        if not report_passed and not report_skipped:
            return Outcome.ERROR
        return Outcome.SKIPPED if report_skipped else None
    if when != "call":
        return None
    if report_skipped:
        return Outcome.SKIPPED
    if decided is None or (decided is Outcome.PASSED and not report_passed):
        return Outcome.PASSED if report_passed else Outcome.ERROR
    return decided
