"""The controller: the one process that turns case records into dumps and summaries.

Without xdist it is the only process; with xdist it is the master, which receives every
worker's reports. Workers never write dumps, so a dump has exactly one writer.
"""

from __future__ import annotations

import contextlib
import os
import re
from html import escape
from pathlib import Path
from typing import Any, NoReturn

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.clock import utc_now
from needle_lib.contract.outcome import Outcome, report_outcome
from needle_lib.contract.records import CaseRecord
from needle_lib.contract.schema import SchemaError, read_recall_dump
from needle_lib.plugin.diskfull import is_no_space, stop_for_disk_full
from needle_lib.plugin.recall.dumps import RecallDumps
from needle_lib.plugin.recall.resume import note_resumed, resumed
from needle_lib.plugin.reports import (
    drop_default_report,
    drop_html_report,
    finished_subject,
    planned_subject,
    planned_title,
    run_title,
    set_needle_environment,
)
from needle_lib.plugin.resume_notes import write_resume_notes
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.search.case_page import CaseDetailPage
from needle_lib.plugin.search.reports import SearchReports
from needle_lib.plugin.session import (
    dump_path,
    has_query_set,
    plan_key,
    result_store,
    results_dir,
    use_color,
)
from needle_lib.recall.gates import GateSettings, check_gates
from needle_lib.report.evaluation import SettledCases, evaluation_html, recall_why, search_why
from needle_lib.report.html import diff_html, search_case_score
from needle_lib.report.search_summary import engine_table
from needle_lib.report.terminal import summary_table
from needle_lib.report.untrusted import escape_id_cell
from needle_lib.templates import macro

#: The score column's place in the pytest-html table: after the result and the test id.
SCORE_COLUMN = 2
CELLS = "report/cells.html.j2"


def outcome_of(report: pytest.TestReport, record: CaseRecord) -> Outcome | None:
    """The case outcome a report settles, or None when a later phase will settle it.

    Recall cases record their score, search cases their verdict, just before asserting;
    a failure before that is a crash, not a quality result."""
    case = record["case"]
    decided = case.get("scored") is not None or case.get("verdict") is not None
    return report_outcome(report.when, report.passed, report.skipped, case, decided)


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def gate_settings(config: pytest.Config) -> GateSettings:
    baseline = config.getoption("baseline")
    if baseline:
        try:
            baseline_dump = read_recall_dump(Path(baseline))
        except SchemaError as exc:
            raise pytest.UsageError(f"--baseline: {exc}") from None
    return GateSettings(
        min_score=config.getoption("min_score"),
        min_pass_rate=config.getoption("min_pass_rate"),
        baseline=baseline_dump if baseline else None,
        max_drop=config.getoption("max_drop"),
    )


class Controller:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        report = config.getoption("report")
        self.recall = RecallDumps(lambda pair: dump_path(config, pair), result_store(config),
                                  lambda pair: resumed(config, pair))
        shard = config.getoption("shard")
        part = f".shard-{shard.index}-of-{shard.count}" if shard else ""
        self.search = SearchReports(
            results_dir(config), Path(report) if report else None, part=part,
            shard={"index": shard.index, "count": shard.count, "by": "query"} if shard else None)
        self.gates = gate_settings(config)
        #: Outcome per node id, so a teardown report can re-file its case with the verdict.
        self.settled: dict[str, Outcome] = {}
        self.finished: list[dict[str, Any]] = []
        self.search_finished: list[dict[str, Any]] = []
        self.gate_failures: list[str] = []
        self.messages: list[str] = []
        self.ran_cases = False
        #: search runs: the pytest-html page has a score column and links each search case
        #: to its section of the detail page (``search/case_page.py``)
        self.search_run = has_query_set(config)
        self.detail: CaseDetailPage | None = None
        #: the "no space" error that stopped the run (``plugin.diskfull``), if one did
        self.disk_full: OSError | None = None
        #: what the report's first screen lists: counts, failed cases and why, skip reasons
        self.settled_cases = SettledCases()
        self.started = utc_now()
        #: pytest-html's report object, once its title hook ran: the title is set again
        #: from what ran when the session ends
        self.html_report: Any = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        try:
            self._logreport(report)
        except OSError as exc:
            if not is_no_space(exc):
                raise
            self._disk_full(exc)

    def _disk_full(self, exc: OSError) -> NoReturn:
        """Stop the run: nothing more is written (``plugin.diskfull``), and what was written
        stays as a killed run leaves it, for ``--resume``."""
        self.disk_full = exc
        drop_html_report(self.config)  # pytest-html would fail writing it, with a traceback
        if self.detail is not None:
            with contextlib.suppress(OSError):
                self.detail.close()
        self.search.abandon()
        stop_for_disk_full(exc, self.config)

    def _logreport(self, report: pytest.TestReport) -> None:
        self.ran_cases = True
        record = record_of(report)
        if record is None:
            return
        if report.when == "teardown" and report.failed:
            self._teardown_failed(report, record)
            return
        outcome = outcome_of(report, record)
        if outcome is None:
            return
        self.settled[report.nodeid] = outcome
        case = record["case"]
        if outcome == Outcome.ERROR and not case.get("error"):
            case["error"] = _last_line(report.longreprtext) or "error"
        longrepr = report.longrepr
        if outcome == Outcome.SKIPPED and isinstance(longrepr, tuple) \
                and not case.get("skip_reason"):
            case["skip_reason"] = str(longrepr[-1])  # pytest's (path, line, reason)
        for message in record.get("messages", []):
            self._note(message)
        self._add(report, record, outcome)

    def _add(self, report: pytest.TestReport, record: CaseRecord, outcome: Outcome) -> None:
        case = record["case"]
        link = None
        if record["kind"] == "recall":
            self.recall.add(record, outcome)
            if record.get("diff") is not None:
                self._attach_extra(report, "html", diff_html(case, record["diff"]))
            why = recall_why(case, outcome)
        elif record["kind"] == "search":
            self.search.add(record, outcome)
            if self.detail is not None:
                link = self.detail.add(report.nodeid, case, outcome)
                self._attach_extra(report, "url", link, name="detail")
            why = search_why(case, outcome)
        else:
            return
        self.settled_cases.note(record["pair"], report.nodeid, outcome, why, link)

    def _teardown_failed(self, report: pytest.TestReport, record: CaseRecord) -> None:
        """A fixture's cleanup failed after the case was settled: the verdict stands (it was
        measured), the dump records the teardown error beside it, and the run says so, as
        junitxml reports an error at teardown beside the test's own result."""
        reason = _last_line(report.longreprtext) or "error at teardown"
        record["case"]["teardown_error"] = reason
        self._note(f"{report.nodeid}: error at teardown: {reason}")
        outcome = self.settled.get(report.nodeid, Outcome.ERROR)
        if outcome == Outcome.ERROR and not record["case"].get("error"):
            record["case"]["error"] = f"teardown: {reason}"
        self._add(report, record, outcome)

    def _nothing_ran(self) -> str:
        recall = self.config.stash.get(plan_key, None)
        reasons = recall.nothing_to_ask() if recall is not None else []
        if reasons:
            return "no case ran: " + "; ".join(reasons)
        keyword = self.config.getoption("keyword")
        searched = keyword and set(re.findall(r"\w+", keyword)) & set(BENCH_NAMES)
        if keyword and not searched and recall is not None and recall.cases:
            return "no case ran: " + recall.keyword_miss(keyword)  # -k jqeury: a corpus typo
        queries = self.config.getoption("queries")
        if queries:
            return (f"no case ran: {queries} has no rows for the selected benches (rows name "
                    f"their bench in 'query_source')")
        from needle_lib.plugin.search.plan import HOW_TO_RUN  # the search half, only to say this

        return f"no case ran. {HOW_TO_RUN}"

    def _note(self, message: str) -> None:
        if message not in self.messages:
            self.messages.append(message)

    @staticmethod
    def _attach_extra(report: pytest.TestReport, kind: str, content: str, **how: str) -> None:
        from pytest_html import extras

        extra = getattr(extras, kind)(content, **how)
        report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Where the detail page goes: beside the pytest-html page, resolved as pytest-html
        resolves it (after ``--html`` defaulted, before any case)."""
        if self.search_run:
            self.search.start_clock()
        self.started = utc_now()
        # before pytest-html reads it (its hook is trylast)
        set_needle_environment(self.config, planned_subject(self.config))
        html = self.config.getoption("htmlpath", None)
        if self.search_run and html:
            self.detail = CaseDetailPage(Path.cwd() / Path(os.path.expandvars(html)).expanduser())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not session.items and not hasattr(session.config, "workerinput"):
            drop_default_report(self.config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not ids:
            drop_default_report(self.config)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.disk_full is not None:
            return  # a full disk: the run files stay as they were, for --resume
        if self.detail is not None:
            self.detail.close()
        if not self.ran_cases and not self.config.getoption("collectonly") \
                and session.exitstatus != pytest.ExitCode.USAGE_ERROR:  # refused: it says why
            self._note(self._nothing_ran())
        self.finished = self.recall.finish()
        note_resumed(self.config, self.recall.paths)
        self.search_finished = self.search.finish(
            interrupted=session.exitstatus == pytest.ExitCode.INTERRUPTED)
        self.gate_failures = check_gates(self.finished, self.gates)
        empty = [r["benchmark"] for r in self.search_finished if not r.get("scored_cases")]
        for bench in empty:
            self._note(f"{bench}: no case was scored (every case skipped or errored): this run "
                       f"evaluated nothing and does not pass")
        if (self.gate_failures or empty) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self._describe_what_ran()

    def pytest_html_report_title(self, report: Any) -> None:
        self.html_report = report
        report.title = planned_title(self.config, self.started)

    def _describe_what_ran(self) -> None:
        """Title and environment from what ran (``-k`` decides which corpora and benches
        did, and under xdist this process never collects): pytest-html reads both when it
        writes the page, after this hook."""
        if not (self.finished or self.search_finished):
            return
        set_needle_environment(self.config,
                               finished_subject(self.finished, self.search_finished))
        if self.html_report is None:
            return
        self.html_report.title = run_title(
            [(dump["corpus"]["name"], dump["model"]["key"]) for dump in self.finished],
            [(report["benchmark"], [e for e in report["engines"] if e != "ultimate"])
             for report in self.search_finished],
            self.started)

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        if self.search_run:
            cells.insert(SCORE_COLUMN, str(macro(CELLS, "score_header")()))

    def pytest_html_results_table_row(self, report: pytest.TestReport | pytest.CollectReport,
                                      cells: list[str]) -> None:
        escape_id_cell(cells)  # pytest-html inserts the id unescaped, via innerHTML
        if self.search_run and cells:
            record = record_of(report)
            score = search_case_score(record["case"]) if record and \
                record["kind"] == "search" else ""
            cells.insert(SCORE_COLUMN, str(macro(CELLS, "score_cell")(score)))

    def pytest_html_results_table_html(self, report: pytest.TestReport | pytest.CollectReport,
                                       data: list[str]) -> None:
        """A skip's log is its reason, not pytest's ``(path, line, reason)`` tuple; a failed
        recall case's message is its diff, which the coloured extra (with composition and
        legend) already shows: drop the plain copy from the log."""
        longrepr = report.longrepr
        if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
            reason = str(longrepr[2]).removeprefix("Skipped: ")
            data[:] = [str(macro(CELLS, "skip_log")(reason)),
                       *(entry for entry in data
                         if not entry.startswith(escape(report.longreprtext)))]
            return
        record = record_of(report)
        text = report.longreprtext
        if record is None or record.get("diff") is None or report.when != "call" or not text:
            return
        # pytest-html escaped the log with ``html.escape``: compare in its encoding
        data[:] = [entry for entry in data if not entry.startswith(escape(text))]

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str],
                                    postfix: list[str], session: pytest.Session) -> None:
        if self.finished or self.search_finished:
            prefix.append(str(evaluation_html(
                list(zip(self.recall.dumps, self.finished, strict=True)),
                list(zip(self.search.paths, self.search_finished, strict=True)),
                self.settled_cases)))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.disk_full is not None:
            return  # pytest prints the one disk-full line (``pytest.exit``); nothing else
        tr = terminalreporter
        write_resume_notes(self.config, tr)
        if self.messages:
            tr.section("needle")
            for message in self.messages:
                tr.write_line(message)
        if self.finished:
            tr.section("needle recall summary")
            tr.write_line(summary_table(self.finished, color=use_color(self.config)))
            for pair, path in self.recall.paths.items():
                tr.write_line(f"dump: {pair} → {path}")
        for pair, search_report in zip(self.search.paths, self.search_finished, strict=True):
            tr.section(f"needle {search_report['benchmark']} summary")
            tr.write_line(engine_table(search_report))
            tr.write_line(f"report: {self.search.paths[pair]}")
        if self.gates.active:
            tr.section("needle gates")
            for line in self.gate_failures:
                tr.write_line(line, red=True)
            if not self.gate_failures:
                tr.write_line("all gates passed", green=True)
