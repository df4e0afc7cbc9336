"""The pytest-html page of an eval run, through pytest-html's public hooks and extras.

Every eval run that runs cases leaves a self-contained HTML report, unless ``--html`` names
one (only eval runs load the plugin, so unit-test runs never get one; ``--collect-only``
gets none: an empty report per invocation only buries the real ones). Needle adds to it:
a title naming the run, an environment table of what was evaluated (``report.environment``,
in pytest-metadata's ``metadata``, which pytest-html shows), the evaluation summary at the
top (``report.evaluation``), a failed recall case's coloured diff, readable skip reasons,
and for search runs a score column and a link from each case's row to its section of the
detail page (``report.case_page``), which the controller appends to as cases settle.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pytest_metadata.plugin import metadata_key

from needle_lib.clock import utc_now
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord, RecallDump
from needle_lib.contract.report import SearchReport, report_fields
from needle_lib.plugin.collect import plan_key, search_plan
from needle_lib.plugin.internals import html_writers
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.settings import results_dir, settings
from needle_lib.provenance import package_info
from needle_lib.report.case_page import CaseDetailPage
from needle_lib.report.environment import (
    NEEDLE_KEYS,
    RunSubject,
    drop_runner_metadata,
    finished_subject,
    needle_environment,
    run_title,
)
from needle_lib.report.evaluation import SettledCases, evaluation_html, recall_why, search_why
from needle_lib.report.html import diff_html, search_case_score
from needle_lib.report.search_summary import engine_label
from needle_lib.report.untrusted import escape_id_cell
from needle_lib.templates import macro

if TYPE_CHECKING:  # the search half is imported only by search runs
    from needle_lib.benches.plan import SearchPlan

__all__ = ["drop_runner_metadata"]  # the plugin's pytest_metadata hook calls it

#: The score column's place in the pytest-html table: after the result and the test id.
SCORE_COLUMN = 2
CELLS = "report/cells.html.j2"

default_report_key = pytest.StashKey[bool]()


def report_name(config: pytest.Config) -> str:
    """``<time>-<selection>.html``: sortable, and says what the run selected."""
    run = settings(config)
    parts = [*run.corpus, *run.model, run.keyword]
    selection = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(p for p in parts if p)).strip("_")
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{selection[:60] or 'all'}.html"


def default_html_report(config: pytest.Config) -> None:
    """Point pytest-html at ``<results>/reports/<name>.html`` unless ``--html`` is given
    (at configure, before pytest-html reads it)."""
    if getattr(config.option, "htmlpath", None) or settings(config).collectonly:
        return
    config.option.htmlpath = str(results_dir(config) / "reports" / report_name(config))
    config.option.self_contained_html = True
    config.stash[default_report_key] = True


def html_path(config: pytest.Config) -> Path | None:
    """The page pytest-html writes, resolved as pytest-html resolves it."""
    html = getattr(config.option, "htmlpath", None)
    return Path.cwd() / Path(os.path.expandvars(html)).expanduser() if html else None


def drop_default_report(config: pytest.Config) -> None:
    """Unregister pytest-html's writer before it writes, if the report is Needle's default
    (one the user named with ``--html`` is always written)."""
    if not config.stash.get(default_report_key, False):
        return
    drop_html_report(config)
    with contextlib.suppress(OSError):  # pytest-html made the directory; leave none behind
        Path(config.option.htmlpath).parent.rmdir()


def drop_html_report(config: pytest.Config) -> None:
    """Unregister pytest-html's writer (if it runs) before it writes: a run with nothing to
    report, or one stopped by a full disk, where writing would only fail again."""
    for writer in html_writers(config):
        config.pluginmanager.unregister(writer)


def attach_extra(report: pytest.TestReport, kind: str, content: str, **how: str) -> None:
    """Add a pytest-html extra (``extras.html``, ``extras.url`` …) to a case's report."""
    from pytest_html import extras

    extra = getattr(extras, kind)(content, **how)
    report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]


def _judge_prompts(plan: SearchPlan) -> str:
    from needle_lib.judge.answer import ANSWER_PROMPT_VERSION
    from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION

    prompts = f"{JUDGE_PROMPT_VERSION} (judged benches)"
    if plan.answer_judge:
        prompts += f", {ANSWER_PROMPT_VERSION} (known-item --judge)"
    return prompts


def planned_subject(config: pytest.Config) -> RunSubject:
    """What the run plans to evaluate (the plans are built when the session starts).

    No corpus: describing one reads it whole (text, lines, token count), and ``-k`` has not
    chosen yet, so ``pytest evals -k news`` would read every recall corpus to list none
    (96 MB more peak memory, ``benchmarks/search_scale.py``). The corpora that ran are
    listed from their dumps when the session ends (``HtmlReport.summarise``)."""
    recall = config.stash.get(plan_key, None)
    subject = RunSubject()
    if recall is not None and recall.cases:
        subject = replace(
            subject, models=[(m.key, m.name, m.base_url, m.source) for m in recall.models])
    if settings(config).has_query_set:
        plan = search_plan(config)
        subject = replace(subject,
                          engines=[engine_label(e, plan.engine_modes) for e in plan.engines],
                          queries=(str(plan.queries_path), len(plan.queries),
                                   plan.queries_sha256),
                          judge=(plan.judge_model, _judge_prompts(plan)))
    return subject


def planned_title(config: pytest.Config, started: Any) -> str:
    """The title from what the run plans (set again from what ran when it ends)."""
    recall = config.stash.get(plan_key, None)
    pairs = [(suite.config.name, model.key) for suite in recall.suites
             for model in recall.models] if recall is not None and recall.cases else []
    search = [("search", search_plan(config).engines)] if settings(config).has_query_set \
        else []
    return run_title(pairs, search, started)


def set_needle_environment(config: pytest.Config, subject: RunSubject) -> None:
    """Put Needle's entries first in pytest-metadata's ``metadata`` (which pytest-html's
    environment table shows), in place, keeping what the user added (``--metadata``, CI
    variables). Called when the session starts, before pytest-html reads the table, and
    again when it ends with what ran."""
    metadata = config.stash.get(metadata_key, None)
    if metadata is None:
        return
    ours = needle_environment(subject, package_info())
    kept = {key: value for key, value in metadata.items() if key not in NEEDLE_KEYS}
    metadata.clear()
    metadata.update(ours)
    metadata.update(kept)


class HtmlReport:
    """pytest-html's hooks, on the controller. ``summaries`` are set at session finish."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        #: search runs: a score column, and each case's row links to its detail section
        self.search_run = settings(config).has_query_set
        self.detail: CaseDetailPage | None = None
        self.summaries: list[str] = []
        #: what the report's first screen lists: counts, failed cases and why, skip reasons
        self.settled = SettledCases()
        self.started = utc_now()
        #: pytest-html's report object, once its title hook ran: the title is set again
        #: from what ran when the session ends
        self.page: Any = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Where the detail page goes: beside the pytest-html page (after ``--html``
        defaulted, before any case); the environment table, before pytest-html reads it
        (its hook is trylast)."""
        self.started = utc_now()
        set_needle_environment(self.config, planned_subject(self.config))
        page = html_path(self.config)
        if self.search_run and page is not None:
            self.detail = CaseDetailPage(page)

    def pytest_html_report_title(self, report: Any) -> None:
        self.page = report
        report.title = planned_title(self.config, self.started)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not session.items:
            drop_default_report(self.config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        if not ids:
            drop_default_report(self.config)

    def add_case(self, report: pytest.TestReport, record: CaseRecord, outcome: Outcome) -> None:
        """A settled case's extras (a recall diff, or a search case's detail link), and
        its line in the summary."""
        link = None
        if record["kind"] == "recall":
            case = record["case"]
            if record.get("diff") is not None:
                attach_extra(report, "html", diff_html(case, record["diff"]))
            why = recall_why(case, outcome)
        else:
            search_case = record["case"]
            if self.detail is not None:
                link = self.detail.add(report.nodeid, search_case, outcome)
                attach_extra(report, "url", link, name="detail")
            why = search_why(search_case, outcome)
        self.settled.note(record["pair"], report.nodeid, outcome, why, link)

    def summarise(self, recall: Sequence[tuple[str, RecallDump]],
                  search: Sequence[tuple[str, SearchReport]]) -> None:
        """The summary block, title and environment from what ran: (pair, dump) and
        (pair, search summary) (``-k`` decides which corpora and benches did, and under
        xdist this process never collects); pytest-html reads all three after this."""
        if not (recall or search):
            return
        self.summaries = [str(evaluation_html(recall, search, self.settled))]
        dumps = [dump for _, dump in recall]
        reports = [report for _, report in search]
        set_needle_environment(self.config, finished_subject(
            dumps, [report_fields(report) for report in reports]))
        if self.page is not None:
            self.page.title = run_title(
                [(dump["corpus"]["name"], dump["model"]["key"]) for dump in dumps],
                [(report.benchmark, [e for e in report.engines if e != "ultimate"])
                 for report in reports],
                self.started)

    def close(self) -> None:
        if self.detail is not None:
            self.detail.close()

    def abandon(self) -> None:
        """A full disk: the detail page is closed as far as it got, the page not written."""
        drop_html_report(self.config)  # pytest-html would fail writing it, with a traceback
        with contextlib.suppress(OSError):
            self.close()

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        if self.search_run:
            cells.insert(SCORE_COLUMN, str(macro(CELLS, "score_header")()))

    def pytest_html_results_table_row(self, report: pytest.TestReport | pytest.CollectReport,
                                      cells: list[str]) -> None:
        escape_id_cell(cells)  # pytest-html inserts the id unescaped, via innerHTML
        if self.search_run and cells:
            record = record_of(report)
            score = ""
            if record is not None and record["kind"] != "recall":
                score = search_case_score(record["case"])
            cells.insert(SCORE_COLUMN, str(macro(CELLS, "score_cell")(score)))

    def pytest_html_results_table_html(self, report: pytest.TestReport | pytest.CollectReport,
                                       data: list[str]) -> None:
        """A skip's log is its reason, not pytest's ``(path, line, reason)`` tuple; a failed
        recall case's message is its diff, which the coloured extra (with composition and
        legend) already shows: drop the plain copy from the log. (pytest-html escaped the
        log with ``html.escape``: entries are compared in its encoding.)"""
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
        data[:] = [entry for entry in data if not entry.startswith(escape(text))]

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str],
                                    postfix: list[str], session: pytest.Session) -> None:
        prefix.extend(self.summaries)
