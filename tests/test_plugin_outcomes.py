"""How the controller settles a case outcome from pytest's reports: a quality miss is FAILED
(and enters the means), a crash before the verdict is an ERROR (and does not)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from needle_lib.plugin.controller import outcome_of


def report(when: str, outcome: str) -> SimpleNamespace:
    return SimpleNamespace(when=when, failed=outcome == "failed", passed=outcome == "passed",
                           skipped=outcome == "skipped")


@pytest.mark.parametrize("case, expected", [
    ({"scored": {"matched": 3}}, "failed"),          # recall: scored, then asserted
    ({"verdict": "ratings [0, 1] (best 1)"}, "failed"),  # search: verdict, then asserted
    ({}, "error"),                                   # the test body crashed before a verdict
])
def test_a_failed_call_is_failed_only_after_a_verdict(case, expected):
    assert outcome_of(report("call", "failed"), {"case": case}) == expected


def test_setup_failures_are_errors_and_skips_are_skips():
    assert outcome_of(report("setup", "failed"), {"case": {}}) == "error"
    assert outcome_of(report("setup", "skipped"), {"case": {}}) == "skipped"
    assert outcome_of(report("setup", "passed"), {"case": {}}) is None
    assert outcome_of(report("teardown", "passed"), {"case": {}}) is None
