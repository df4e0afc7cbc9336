"""The pytest-html page of an eval run, through pytest-html's public hooks and extras.

Every eval run that runs cases leaves a self-contained HTML report, unless ``--html`` names
one (only eval runs load the plugin, so unit-test runs never get one; ``--collect-only``
gets none: an empty report per invocation only buries the real ones). Needle adds to it:
a failed recall case's coloured diff, the run summaries, and for search runs a score
column and a link from each case's row to its section of the detail page
(``report.case_page``), which the controller appends to as cases settle.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from html import escape
from pathlib import Path

import pytest

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord
from needle_lib.plugin.internals import html_writers
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.settings import results_dir, settings
from needle_lib.report.case_page import CaseDetailPage
from needle_lib.report.html import diff_html, search_case_score, search_summary_html, summary_html
from needle_lib.report.untrusted import escape_id_cell

#: The score column's place in the pytest-html table: after the result and the test id.
SCORE_COLUMN = 2

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


class HtmlReport:
    """pytest-html's hooks, on the controller. ``summaries`` are set at session finish."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        #: search runs: a score column, and each case's row links to its detail section
        self.search_run = settings(config).has_query_set
        self.detail: CaseDetailPage | None = None
        self.summaries: list[str] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Where the detail page goes: beside the pytest-html page (after ``--html``
        defaulted, before any case)."""
        page = html_path(self.config)
        if self.search_run and page is not None:
            self.detail = CaseDetailPage(page)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not session.items:
            drop_default_report(self.config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        if not ids:
            drop_default_report(self.config)

    def add_case(self, report: pytest.TestReport, record: CaseRecord, outcome: Outcome) -> None:
        """A settled case's extras: a recall diff, or a search case's detail link."""
        if record["kind"] == "recall":
            if record.get("diff") is not None:
                attach_extra(report, "html", diff_html(record["case"], record["diff"]))
        elif self.detail is not None:
            link = self.detail.add(report.nodeid, record["case"], outcome)
            attach_extra(report, "url", link, name="detail")

    def summarise(self, recall: list[dict[str, object]],
                  search: list[dict[str, object]]) -> None:
        self.summaries = ([summary_html(recall)] if recall else []) + (
            [search_summary_html(search)] if search else [])

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
            cells.insert(SCORE_COLUMN,
                         '<th class="sortable" data-column-type="score">Score</th>')

    def pytest_html_results_table_row(self, report: pytest.TestReport | pytest.CollectReport,
                                      cells: list[str]) -> None:
        escape_id_cell(cells)  # pytest-html inserts the id unescaped, via innerHTML
        if self.search_run and cells:
            record = record_of(report)
            score = search_case_score(record["case"]) if record and \
                record["kind"] == "search" else ""
            cells.insert(SCORE_COLUMN, f'<td class="col-score">{escape(score)}</td>')

    def pytest_html_results_table_html(self, report: pytest.TestReport | pytest.CollectReport,
                                       data: list[str]) -> None:
        """A failed recall case's message is its diff, which the coloured extra (with
        composition and legend) already shows: drop the plain copy from the log."""
        record = record_of(report)
        text = report.longreprtext
        if record is None or record.get("diff") is None or report.when != "call" or not text:
            return
        data[:] = [entry for entry in data if not entry.startswith(escape(text))]

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str],
                                    postfix: list[str], session: pytest.Session) -> None:
        prefix.extend(self.summaries)
