"""How the controller settles a case outcome from pytest's reports: a quality miss is FAILED
(and enters the means), a crash before the verdict is an ERROR (and does not)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from needle_lib.plugin.controller import outcome_of


def report(when: str, outcome: str) -> SimpleNamespace:
    return SimpleNamespace(when=when, failed=outcome == "failed", passed=outcome == "passed",
                           skipped=outcome == "skipped")


@pytest.mark.parametrize("decided, call, expected", [
    ("failed", "failed", "failed"),   # the benchmark's verdict, asserted by the test body
    ("passed", "passed", "passed"),
    (None, "failed", "error"),        # the test body crashed before a verdict
    ("passed", "failed", "error"),    # ... or failed though the verdict was a pass
    ("failed", "passed", "failed"),   # a body that ignores the verdict does not undo it
    (None, "passed", "passed"),       # a test of no benchmark's
])
def test_the_call_settles_the_benchmarks_verdict(decided, call, expected):
    record = {"case": {}} if decided is None else {"case": {}, "decided": decided}
    assert outcome_of(report("call", call), record) == expected


def test_setup_failures_are_errors_and_skips_are_skips():
    assert outcome_of(report("setup", "failed"), {"case": {}}) == "error"
    assert outcome_of(report("setup", "skipped"), {"case": {}}) == "skipped"
    assert outcome_of(report("setup", "passed"), {"case": {}}) is None
    assert outcome_of(report("teardown", "passed"), {"case": {}}) is None
