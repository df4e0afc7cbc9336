"""The controller: the one process that turns case records into dumps and summaries.

Without xdist it is the only process; with xdist it is the master, which receives every
worker's reports. Workers never write dumps, so a dump has exactly one writer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from needle_lib.plugin.dumps import RecallDumps
from needle_lib.plugin.resume import results_dir
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.session import use_color
from needle_lib.recall.results import ERROR, FAILED, PASSED, SKIPPED
from needle_lib.report.terminal import summary_table


def outcome_of(report: pytest.TestReport, record: dict[str, Any]) -> str | None:
    """The case outcome a report settles, or None when a later phase will settle it."""
    if report.when == "setup":
        if report.failed:
            return ERROR
        return SKIPPED if report.skipped else None
    if report.when != "call":
        return None
    if report.skipped:
        return SKIPPED
    if report.passed:
        return PASSED
    # A failure before the verdict was scored is a crash, not a quality result.
    return FAILED if record["case"].get("scored") is not None else ERROR


class Controller:
    def __init__(self, config: pytest.Config, run_dir: Path) -> None:
        self.config = config
        self.run_dir = run_dir
        dump = config.getoption("dump")
        self.recall = RecallDumps(
            results_dir(config), Path(dump) if dump else None, config.getoption("resume")
        )
        self.finished: list[dict[str, Any]] = []
        self.messages: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is None:
            return
        outcome = outcome_of(report, record)
        if outcome is None:
            return
        case = record["case"]
        if outcome == ERROR and not case.get("error"):
            case["error"] = report.longreprtext.strip().splitlines()[-1:][0] if \
                report.longreprtext.strip() else "error"
        if outcome == SKIPPED and not case.get("skip_reason") and report.longrepr:
            case["skip_reason"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) \
                else str(report.longrepr)
        for message in record.get("messages", []):
            if message not in self.messages:
                self.messages.append(message)
        if record["kind"] == "recall":
            self.recall.add(record, outcome)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finished = self.recall.finish()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.finished:
            return
        tr = terminalreporter
        tr.section("needle recall summary")
        for message in self.messages:
            tr.write_line(message)
        tr.write_line(summary_table(self.finished, color=use_color(self.config)))
        for pair, path in self.recall.paths.items():
            tr.write_line(f"dump: {pair} → {path}")
