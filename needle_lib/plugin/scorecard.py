"""The ``scorecard``: how a case's record travels from a test to the controller.

A record is a plain JSON-able dict attached to the test item's ``user_properties`` under
``RECORD_KEY``. pytest copies user properties into every test report and xdist ships
reports from workers to the controller, so the controller sees each record exactly as the
worker built it — the same path pytest's own ``record_property`` and junitxml use.
"""

from __future__ import annotations

from typing import Any

import pytest

RECORD_KEY = "needle_record"


class Scorecard:
    def __init__(self, item: pytest.Item, *, color: bool) -> None:
        self._item = item
        self.color = color
        self.record: dict[str, Any] = {}

    def open(self, kind: str, pair: str, header: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Start this case's record; later updates reach the controller with the report."""
        self.record = {"kind": kind, "pair": pair, "header": header, **fields}
        self._item.user_properties.append((RECORD_KEY, self.record))
        return self.record

    @property
    def case(self) -> dict[str, Any]:
        """The part of the record that goes into the dump."""
        return self.record["case"]

    def update_case(self, **fields: Any) -> None:
        self.record["case"].update(fields)

    def set_detail(self, name: str, value: Any) -> None:
        """Report-only data (a diff, say): shown in terminal and HTML, not dumped."""
        self.record[name] = value


def record_of(report: pytest.TestReport) -> dict[str, Any] | None:
    for name, value in report.user_properties:
        if name == RECORD_KEY:
            return value
    return None
