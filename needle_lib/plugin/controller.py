"""The controller: the one process that turns case records into dumps and summaries.

Without xdist it is the only process; with xdist it is the master, which receives every
worker's reports. Workers never write dumps, so a dump has exactly one writer. It settles
each case's outcome from its reports, writes the recall dumps and search journals after
every case, applies the gates, and prints the summaries; a full disk stops the run with
one line (``needle_lib.diskfull``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, NoReturn

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.benches.run_reports import SearchReports
from needle_lib.contract.outcome import Outcome, report_outcome
from needle_lib.contract.records import CaseRecord, RecallDump, family_of
from needle_lib.contract.report import SearchReport
from needle_lib.contract.schema import SchemaError
from needle_lib.diskfull import DISK_FULL_EXIT, disk_full_message, is_no_space
from needle_lib.kernel.benchmark import RunWriter
from needle_lib.kernel.journal import JournalInUse
from needle_lib.plugin.collect import plan_key
from needle_lib.plugin.html import HtmlReport
from needle_lib.plugin.resume import resume_notes, resumed
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.settings import dump_path, result_store, results_dir, settings, use_color
from needle_lib.recall.dumps import RecallDumps
from needle_lib.recall.gates import GateSettings, check_gates
from needle_lib.recall.journal import read_recall_run
from needle_lib.recall.results import INCOMPLETE_STATUS
from needle_lib.report.search_summary import engine_table
from needle_lib.report.terminal import effective_length_section, summary_table


def outcome_of(report: pytest.TestReport, record: CaseRecord) -> Outcome | None:
    """The case outcome a report settles, or None when a later phase will settle it: the
    verdict its benchmark decided (``record["decided"]``), as the test body asserted it."""
    decided = record.get("decided")
    return report_outcome(report.when, report.passed, report.skipped,
                          Outcome(decided) if decided is not None else None)


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def incomplete_line(summary: SearchReport) -> str:
    """What a search summary says of a run that is not complete (the recall table's status
    column says the same, ``recall.results.run_status``): a ``-k`` or ``--engines`` that
    selects part of the bench, a skipped engine or an interrupted run is not a full run."""
    expected = summary.header.get("expected_cases", 0)
    return (f"{INCOMPLETE_STATUS}: not every one of the {expected} expected case(s) was asked "
            "and answered (a -k selection, a skipped engine or an interrupted run); this "
            "report is not a full run")


def gate_settings(config: pytest.Config) -> GateSettings:
    run = settings(config)
    baseline = None
    if run.baseline:
        try:
            baseline = read_recall_run(Path(run.baseline))
        except SchemaError as exc:
            raise pytest.UsageError(f"--baseline: {exc}") from None
    return GateSettings(min_score=run.min_score, min_pass_rate=run.min_pass_rate,
                        baseline=baseline, max_drop=run.max_drop)


class Controller:
    def __init__(self, config: pytest.Config, html: HtmlReport) -> None:
        self.config = config
        self.html = html
        run = settings(config)
        self.recall = RecallDumps(lambda pair: dump_path(config, pair), result_store(config),
                                  lambda pair: resumed(config, pair))
        shard = run.shard
        part = f".shard-{shard.index}-of-{shard.count}" if shard else ""
        self.search = SearchReports(
            results_dir(config), Path(run.report) if run.report else None, part=part,
            shard={"index": shard.index, "count": shard.count, "by": "query"} if shard else None)
        #: each family's journals, by the record kind it files (the results are read from
        #: ``recall`` and ``search`` themselves, so any result type will do here)
        self.writers: dict[Literal["recall", "search"], RunWriter[object]] = {
            "recall": self.recall, "search": self.search}
        self.gates = gate_settings(config)
        #: Outcome per node id, so a teardown report can re-file its case with the verdict.
        self.settled: dict[str, Outcome] = {}
        self.finished: list[RecallDump] = []
        self.search_finished: list[SearchReport] = []
        self.gate_failures: list[str] = []
        self.messages: list[str] = []
        self.ran_cases = False
        #: the "no space" error that stopped the run (``needle_lib.diskfull``), if one did
        self.disk_full: OSError | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        try:
            self._logreport(report)
        except JournalInUse as exc:  # a second run on one --dump / --report path: its
            # journal was never opened, so the other run's files are as that run left them
            pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
        except OSError as exc:
            if not is_no_space(exc):
                raise
            self._disk_full(exc)

    def _disk_full(self, exc: OSError) -> NoReturn:
        """Stop the run: nothing more is written (``needle_lib.diskfull``), and what was
        written stays as a killed run leaves it, for ``--resume``."""
        self.disk_full = exc
        self.html.abandon()
        for writer in self.writers.values():
            writer.abandon()
        pytest.exit(disk_full_message(exc, self.config.invocation_params.args),
                    returncode=DISK_FULL_EXIT)

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
        self.writers[family_of(record)].add(record, outcome)
        self.html.add_case(report, record, outcome)

    def _teardown_failed(self, report: pytest.TestReport, record: CaseRecord) -> None:
        """A fixture's cleanup failed after the case was settled: the verdict stands (it was
        measured), the dump records the teardown error beside it, and the run says so, as
        junitxml reports an error at teardown beside the test's own result."""
        reason = _last_line(report.longreprtext) or "error at teardown"
        case = record["case"]
        case["teardown_error"] = reason
        self._note(f"{report.nodeid}: error at teardown: {reason}")
        outcome = self.settled.get(report.nodeid, Outcome.ERROR)
        if outcome == Outcome.ERROR and not case.get("error"):
            case["error"] = f"teardown: {reason}"
        self._add(report, record, outcome)

    def _nothing_ran(self) -> str:
        recall = self.config.stash.get(plan_key, None)
        reasons = recall.nothing_to_ask() if recall is not None else []
        if reasons:
            return "no case ran: " + "; ".join(reasons)
        keyword = settings(self.config).keyword
        searched = keyword and set(re.findall(r"\w+", keyword)) & set(BENCH_NAMES)
        if keyword and not searched and recall is not None and recall.cases:
            return "no case ran: " + recall.keyword_miss(keyword)  # -k jqeury: a corpus typo
        queries = settings(self.config).queries
        if queries:
            return (f"no case ran: {queries} has no rows for the selected benches (rows name "
                    f"their bench in 'query_source')")
        from needle_lib.benches.plan import HOW_TO_RUN  # the search half, only to say this

        return f"no case ran. {HOW_TO_RUN}"

    def _note(self, message: str) -> None:
        if message not in self.messages:
            self.messages.append(message)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if settings(self.config).has_query_set:
            self.search.start_clock()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.disk_full is not None:
            return  # a full disk: the run files stay as they were, for --resume
        self.html.close()
        if not self.ran_cases and not settings(self.config).collectonly \
                and session.exitstatus != pytest.ExitCode.USAGE_ERROR:  # refused: it says why
            self._note(self._nothing_ran())
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        self.finished = self.recall.finish(interrupted=interrupted)
        self.search_finished = self.search.finish(interrupted=interrupted)
        self.html.summarise(list(zip(self.recall.paths, self.finished, strict=True)),
                            list(zip(self.search.paths, self.search_finished, strict=True)))
        self.gate_failures = check_gates(self.finished, self.gates)
        empty = [r.benchmark for r in self.search_finished if not r.scored_cases]
        for bench in empty:
            self._note(f"{bench}: no case was scored (every case skipped or errored): this run "
                       f"evaluated nothing and does not pass")
        if (self.gate_failures or empty) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.disk_full is not None:
            return  # pytest prints the one disk-full line (``pytest.exit``); nothing else
        tr = terminalreporter
        notes = resume_notes(self.config)
        if notes:
            tr.section("needle resume")
            for note in notes:
                tr.write_line(note)
        if self.messages:
            tr.section("needle")
            for message in self.messages:
                tr.write_line(message)
        if self.finished:
            tr.section("needle recall summary")
            tr.write_line(summary_table(self.finished, color=use_color(self.config)))
            for line in effective_length_section(self.finished):
                tr.write_line(line)
            for pair, path in self.recall.paths.items():
                tr.write_line(f"dump: {pair} → {path}")
        for pair, search_report in zip(self.search.paths, self.search_finished, strict=True):
            tr.section(f"needle {search_report.benchmark} summary")
            tr.write_line(engine_table(search_report))
            if not search_report.complete:
                tr.write_line(incomplete_line(search_report), yellow=True)
            tr.write_line(f"report: {self.search.paths[pair]}")
        if self.gates.active:
            tr.section("needle gates")
            for line in self.gate_failures:
                tr.write_line(line, red=True)
            if not self.gate_failures:
                tr.write_line("all gates passed", green=True)
