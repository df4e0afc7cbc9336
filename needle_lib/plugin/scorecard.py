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

from needle_lib.contract.records import (
    BenchCaseRecord,
    CaseRecord,
    RecallCaseRecord,
    RecallHeader,
    RecallRecord,
    SearchRecord,
)
from needle_lib.contract.schema import SearchHeaderRecord

RECORD_KEY = "needle_record"


class Scorecard:
    def __init__(self, item: pytest.Item, *, color: bool) -> None:
        self._item = item
        self.color = color
        self.record: CaseRecord | None = None

    def open_recall(self, pair: str, header: RecallHeader, case: RecallCaseRecord) -> None:
        """Start this recall case's record; later updates reach the controller with the
        report."""
        self._open(RecallRecord(kind="recall", pair=pair, header=header, case=case))

    def open_search(self, pair: str, header: SearchHeaderRecord, case: BenchCaseRecord) -> None:
        """Start this search case's record (see ``open_recall``)."""
        self._open(SearchRecord(kind="search", pair=pair, header=header, case=case))

    def _open(self, record: CaseRecord) -> None:
        self.record = record
        self._item.user_properties.append((RECORD_KEY, record))

    def _opened(self) -> CaseRecord:
        if self.record is None:
            raise RuntimeError("scorecard used before a fixture opened the case's record")
        return self.record

    @property
    def case(self) -> RecallCaseRecord | BenchCaseRecord:
        """The part of the record that goes into the dump."""
        return self._opened()["case"]

    @property
    def search_case(self) -> BenchCaseRecord:
        """The case of a record opened as ``search``."""
        record = self._opened()
        if record["kind"] != "search":
            raise RuntimeError(f"scorecard holds a {record['kind']} case, not a search case")
        return record["case"]

    def update_case(self, **fields: Any) -> None:
        """Set fields of the case by name: recall's scoring helpers hand theirs over as
        keywords (``recall.results``), and fail-fast's skip is either family's. A search
        fixture sets its typed case's keys itself."""
        case: Any = self._opened()["case"]  # keys by name: what the keywords say is unchecked
        case.update(fields)

    def set_detail(self, name: Literal["diff", "messages"],
                   value: list[str] | list[list[str]]) -> None:
        """Report-only data (a diff, say): shown in terminal and HTML, not dumped."""
        record = self._opened()
        if name == "messages":
            record["messages"] = cast(list[str], value)
        elif record["kind"] == "recall":
            record["diff"] = cast(list[list[str]], value)
        else:
            raise RuntimeError("a diff is a recall case's detail")


def record_of(report: pytest.TestReport | pytest.CollectReport) -> CaseRecord | None:
    """The case record a report carries; None for a report without one, such as a
    collection error's ``CollectReport`` (which pytest-html passes to its row hooks and
    which has no ``user_properties`` at all)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == RECORD_KEY:
            return cast(CaseRecord, value)
    return None
