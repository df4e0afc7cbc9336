"""The ``scorecard``: how a case's record travels from a test to the controller.

A record (``contract.records.CaseRecord``) is a JSON-able dict attached to the test
item's ``user_properties`` under ``RECORD_KEY``. pytest copies user properties into every
test report and xdist ships reports from workers to the controller, so the controller
sees each record exactly as the worker built it — the same path pytest's own
``record_property`` and junitxml use.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import pytest

from needle_lib.contract.records import CaseRecord, RecallCaseRecord, SearchCaseRecord

RECORD_KEY = "needle_record"


class Scorecard:
    def __init__(self, item: pytest.Item, *, color: bool) -> None:
        self._item = item
        self.color = color
        self.record: CaseRecord | None = None

    def open(self, kind: Literal["recall", "search"], pair: str, header: dict[str, Any], *,
             case: RecallCaseRecord | SearchCaseRecord) -> CaseRecord:
        """Start this case's record; later updates reach the controller with the report."""
        self.record = CaseRecord(kind=kind, pair=pair, header=header, case=case)
        self._item.user_properties.append((RECORD_KEY, self.record))
        return self.record

    def _opened(self) -> CaseRecord:
        if self.record is None:
            raise RuntimeError("scorecard used before a fixture opened the case's record")
        return self.record

    @property
    def case(self) -> RecallCaseRecord | SearchCaseRecord:
        """The part of the record that goes into the dump."""
        case: RecallCaseRecord | SearchCaseRecord = self._opened()["case"]
        return case

    @property
    def search_case(self) -> SearchCaseRecord:
        """The case of a record opened as ``search``."""
        record = self._opened()
        if record["kind"] != "search":
            raise RuntimeError(f"scorecard holds a {record['kind']} case, not a search case")
        case: SearchCaseRecord = record["case"]
        return case

    def update_case(self, **fields: Any) -> None:
        self._opened()["case"].update(fields)

    def set_detail(self, name: Literal["diff", "messages"],
                   value: list[str] | list[list[str]]) -> None:
        """Report-only data (a diff, say): shown in terminal and HTML, not dumped."""
        self._opened()[name] = value


def record_of(report: pytest.TestReport | pytest.CollectReport) -> CaseRecord | None:
    """The case record a report carries; None for a report without one, such as a
    collection error's ``CollectReport`` (which pytest-html passes to its row hooks and
    which has no ``user_properties`` at all)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == RECORD_KEY:
            return cast(CaseRecord, value)
    return None
