"""The search cases' detail page, beside the run's pytest-html page: each case's results
with their verdicts, written as the case settles.

pytest-html keeps every row's extras in memory and renders the whole page, as one JSON blob
inside one string, when the run ends: with each search case's results table attached as an
extra, a 20,000-case run held every table to the end and spent most of its last 20 seconds
rendering them. So a search case's row there stays compact (outcome, id, score and a link
to its detail), and the detail is appended to ``<page>.cases.html`` by the controller, one
section per case in the order the cases settle: constant work per case, nothing kept, and
nothing left to render at the end. A run killed mid-way leaves a page without its closing
tags, which browsers show as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO
from urllib.parse import quote

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import SearchCaseRecord
from needle_lib.jsonio import name_the_file
from needle_lib.report.evaluation import rating_legend
from needle_lib.report.html import search_case_html
from needle_lib.templates import render

SUFFIX = ".cases.html"



def detail_path(html_report: Path) -> Path:
    """``<report>.cases.html`` beside pytest-html's ``<report>.html``."""
    return html_report.with_name(html_report.stem + SUFFIX)


class CaseDetailPage:
    """The page of one run (one writer: the controller). Opened at the first case, so a run
    without search cases leaves none."""

    def __init__(self, html_report: Path) -> None:
        self.report = html_report
        self.path = detail_path(html_report)
        self._fh: IO[str] | None = None
        self._count = 0

    def add(self, nodeid: str, case: SearchCaseRecord, outcome: Outcome) -> str:
        """Append the case's section; returns the link to it, relative to the report."""
        try:
            return self._add(nodeid, case, outcome)
        except OSError as exc:  # a full disk: the message must name the page
            name_the_file(exc, self.path)
            raise

    def _add(self, nodeid: str, case: SearchCaseRecord, outcome: Outcome) -> str:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("w", encoding="utf-8")
            ratings, relevant = rating_legend()
            self._fh.write(render(
                "report/case_page_head.html.j2", title=self.path.name,
                report_href=quote(self.report.name), report_name=self.report.name,
                ratings=ratings, relevant=relevant))
        self._count += 1
        anchor = f"case-{self._count}"
        self._fh.write(render("report/case_section.html.j2", anchor=anchor, test_id=nodeid,
                              outcome=outcome.value, why=_why(case),
                              detail=search_case_html(case)) + "\n")
        return f"{quote(self.path.name)}#{anchor}"

    def close(self) -> None:
        if self._fh is not None:
            self._fh.write("</body></html>\n")
            self._fh.close()
            self._fh = None


def _why(case: SearchCaseRecord) -> list[tuple[str, str]]:
    """The case's verdict line, or why it has none (its error or skip reason)."""
    lines = [
        (label, case.get(key))
        for label, key in (
            ("verdict", "verdict"),
            ("error", "error"),
            ("skipped", "skip_reason"),
            ("error at teardown", "teardown_error"),
        )
    ]
    return [(label, str(text)) for label, text in lines if text]
