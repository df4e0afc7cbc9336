"""The ``scorecard``: how a case's record travels from a test to the controller.

A record (``contract.records.CaseRecord``) is a JSON-able dict attached to the test
item's ``user_properties`` under ``RECORD_KEY``. pytest copies user properties into every
test report and xdist ships reports from workers to the controller, so the controller
sees each record exactly as the worker built it — the same path pytest's own
``record_property`` and junitxml use. The record is attached as soon as the case's
benchmark opens it (``plugin.fixtures.settle``) and filled in place, so a case that
crashes halfway still files what is known of it.
"""

from __future__ import annotations

from typing import cast

import pytest

from needle_lib.contract.records import BenchCaseRecord, CaseRecord, RecallCaseRecord

RECORD_KEY = "needle_record"


class Scorecard:
    def __init__(self, item: pytest.Item) -> None:
        self._item = item
        self.record: CaseRecord | None = None

    def open(self, record: CaseRecord) -> None:
        """Attach this case's record; later changes to it reach the controller with the
        report."""
        self.record = record
        self._item.user_properties.append((RECORD_KEY, record))

    @property
    def case(self) -> RecallCaseRecord | BenchCaseRecord:
        """The part of the record that goes into the dump or report."""
        if self.record is None:
            raise RuntimeError("scorecard used before a benchmark opened the case's record")
        return self.record["case"]


def record_of(report: pytest.TestReport | pytest.CollectReport) -> CaseRecord | None:
    """The case record a report carries; None for a report without one, such as a
    collection error's ``CollectReport`` (which pytest-html passes to its row hooks and
    which has no ``user_properties`` at all)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == RECORD_KEY:
            return cast(CaseRecord, value)
    return None
