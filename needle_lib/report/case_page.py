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

from html import escape
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from needle_lib.contract.outcome import Outcome
from needle_lib.jsonio import name_the_file
from needle_lib.report.html import search_case_html

SUFFIX = ".cases.html"

_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:1em 2em}}section{{margin:1.5em 0}}
td,th{{padding:2px 6px;vertical-align:top;text-align:left}}
.outcome-passed{{color:#2a7d2a}}.outcome-failed,.outcome-error{{color:#c0392b}}
.outcome-skipped{{color:#8a6d00}}</style></head>
<body><h1>{title}</h1>
<p>Each search case of the run <a href="{report}">{report_text}</a>, in the order the cases
settled: the engine's results with their verdicts.</p>
"""


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

    def add(self, nodeid: str, case: dict[str, Any], outcome: Outcome) -> str:
        """Append the case's section; returns the link to it, relative to the report."""
        try:
            return self._add(nodeid, case, outcome)
        except OSError as exc:  # a full disk: the message must name the page
            name_the_file(exc, self.path)
            raise

    def _add(self, nodeid: str, case: dict[str, Any], outcome: Outcome) -> str:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("w", encoding="utf-8")
            self._fh.write(
                _HEAD.format(
                    title=escape(self.path.name),
                    report=escape(quote(self.report.name)),
                    report_text=escape(self.report.name),
                )
            )
        self._count += 1
        anchor = f"case-{self._count}"
        self._fh.write(
            f'<section id="{anchor}"><h3>{escape(nodeid)} · '
            f'<span class="outcome-{outcome.value}">{outcome.value}</span></h3>'
            f"{_why(case)}{search_case_html(case)}</section>\n"
        )
        return f"{quote(self.path.name)}#{anchor}"

    def close(self) -> None:
        if self._fh is not None:
            self._fh.write("</body></html>\n")
            self._fh.close()
            self._fh = None


def _why(case: dict[str, Any]) -> str:
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
    shown = [f"{label}: {escape(str(text))}" for label, text in lines if text]
    return f"<p>{'<br>'.join(shown)}</p>" if shown else ""
