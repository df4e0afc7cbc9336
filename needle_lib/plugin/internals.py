"""Every place the plugin reaches into a private part of pytest, xdist or pytest-html.

None has a public equivalent today; each is small, says why it exists, is covered by a
test that fails when the internal moves (``tests/test_plugin_internals.py``,
``tests/test_case_retention.py``), and the package it reaches into carries an upper
version bound in ``pyproject.toml``. Nothing else in ``needle_lib`` touches a private
attribute of these packages.

- pytest-html keeps each case's reports in ``BaseReport._reports`` until the end of the
  run; a 20,000-case run held them all. Once pytest-html has turned a case into rows, its
  entry is dropped (``html_case_tables``). Its writer is found by class
  (``pytest_html.basereport``, not part of its documented API) to unregister it when a run
  has nothing to report.
- pytest's failure summary looks up each failed case's teardown report in the list of
  every passing setup and teardown report, which the terminal reporter keeps under the
  category ``""`` (``TerminalReporter._get_teardown_reports``): quadratic, tens of seconds
  after a 20,000-case run. A Needle case's quiet report is not kept there (``unlist_quiet``).
- xdist 3.8 marks a case's ``xdist_group`` by rewriting ``item._nodeid``; pytest 9.2 reads
  node ids from ``item._id``, so the suffix is lost and ``--dist loadgroup`` silently
  scatters every group (pytest-xdist#1386). ``keep_group_suffixes`` re-applies it.
"""

from __future__ import annotations

import pytest

#: pytest's category of a passing setup or teardown report in ``TerminalReporter.stats``.
QUIET = ""


def html_writers(config: pytest.Config) -> list[object]:
    """pytest-html's page writers registered in this run (none without ``--html``)."""
    from pytest_html.basereport import BaseReport

    return [plugin for plugin in config.pluginmanager.get_plugins()
            if isinstance(plugin, BaseReport)]


def html_case_tables(config: pytest.Config) -> list[dict[str, object]]:
    """pytest-html's per-case report tables (``BaseReport._reports``: node id → reports)."""
    tables = (getattr(writer, "_reports", None) for writer in html_writers(config))
    return [table for table in tables if isinstance(table, dict)]


def unlist_quiet(config: pytest.Config, report: pytest.TestReport) -> None:
    """Take ``report``, a passing setup or teardown report without output, back out of the
    terminal reporter's list, where it has just been added."""
    if not report.passed or report.when == "call" or report.sections:
        return
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    quiet = terminal.stats.get(QUIET) if terminal is not None else None
    if quiet and quiet[-1] is report:
        quiet.pop()


def keep_group_suffixes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a loadgroup worker: make the ``@group`` suffix xdist gave a node id take effect.
    Call after xdist's own ``pytest_collection_modifyitems``, which adds them."""
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    from _pytest.nodeid import NodeId  # pytest ≥ 9.2 only, where the suffix is lost

    for item in items:
        legacy = getattr(item, "_nodeid", None)
        if isinstance(legacy, str) and legacy != item.nodeid:
            item._id = NodeId.parse(legacy)
