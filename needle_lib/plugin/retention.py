"""What a long run keeps of a case once it is settled: no more than pytest itself needs.

A case's record rides on its item and on its setup, call and teardown reports, and pytest's
terminal reporter and pytest-html keep every report to the end of the run: a 20,000-case
search run held 20,000 records (results, snippets, judge reasoning, a header each) until
it exited. Once every plugin has seen a case's teardown report the record has done its
work (the controller journaled it, pytest-html and junitxml took what they show), so it
is dropped from the item and the reports. pytest-html also keeps each case's setup, call and
teardown reports in a table of its own that it reads only while it turns the case into rows,
at the teardown report: the case's entry is dropped from that table once it has.

pytest's failure summary also looks up each failed case's teardown report in the list of
every passing setup and teardown report (``TerminalReporter._get_teardown_reports``):
quadratic, tens of seconds after the last case of a 20,000-case run. A passing setup or
teardown report without captured output adds nothing to any summary, so a Needle case's
is not kept in that list.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from needle_lib.plugin.scorecard import RECORD_KEY, record_of

QUIET = ""  # pytest's category of a passing setup or teardown report


def without_record(properties: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """A new list, so a plugin that kept the old one (pytest-json-report) keeps its view."""
    return [entry for entry in properties if entry[0] != RECORD_KEY]


class CaseRetention:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        #: a case's reports seen so far, until its teardown report (xdist ships each report
        #: on its own, so they do not share the item's list of properties)
        self._reports: dict[str, list[pytest.TestReport]] = {}
        self._html_tables: list[dict[str, Any]] | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, Any, Any]:
        result = yield  # every plugin has seen the report
        if record_of(report) is None:
            return result
        self._unlist_quiet(report)
        self._reports.setdefault(report.nodeid, []).append(report)
        if report.when == "teardown":
            for settled in self._reports.pop(report.nodeid):
                settled.user_properties = without_record(settled.user_properties)
            for table in self._html_report_tables():
                table.pop(report.nodeid, None)
        return result

    def _html_report_tables(self) -> list[dict[str, Any]]:
        """pytest-html's per-case report tables (``BaseReport._reports``, a plain dict of
        node id → reports): none when pytest-html writes no page."""
        if self._html_tables is None:
            from pytest_html.basereport import BaseReport

            plugins = self._config.pluginmanager.get_plugins()
            tables = (getattr(plugin, "_reports", None) for plugin in plugins
                      if isinstance(plugin, BaseReport))
            self._html_tables = [table for table in tables if isinstance(table, dict)]
        return self._html_tables

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        result = yield  # the case's reports are logged
        item.user_properties = without_record(item.user_properties)
        return result

    def _unlist_quiet(self, report: pytest.TestReport) -> None:
        if not report.passed or report.when == "call" or report.sections:
            return
        terminal = self._config.pluginmanager.get_plugin("terminalreporter")
        quiet = terminal.stats.get(QUIET) if terminal is not None else None
        if quiet and quiet[-1] is report:  # just added by the terminal reporter
            quiet.pop()
