"""HTML renderings for pytest-html reports: a case's diff and the search cases' score cell
and detail, from the templates in ``needle_lib/templates/report`` (autoescaped).

Inline styles only, so a self-contained report looks right offline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from needle_lib.contract.records import RecallCaseRecord, SearchCaseRecord, SearchResultRecord
from needle_lib.report.evaluation import COLORS, DIFF_LEGEND
from needle_lib.report.terminal import STYLES, case_headline, composition_line
from needle_lib.templates import render


@dataclass(frozen=True)
class DiffLine:
    status: str
    marker: str
    text: str
    style: str


def diff_html(case: RecallCaseRecord, diff: Iterable[Sequence[str]]) -> Markup:
    """The case's one rendering in the report: headline, composition, legend, coloured
    diff (the plain-text failure message is dropped from the log, see the controller)."""
    lines = [DiffLine(status, STYLES[status][0], text, COLORS[status])
             for status, text, *_ in diff]
    return render("report/diff.html.j2", headline=case_headline(case),
                  composition=composition_line(case["composition"]), legend=DIFF_LEGEND,
                  lines=lines)


@dataclass(frozen=True)
class ResultRow:
    """One result of a search case as the detail shows it."""

    rank: int
    verdict: str
    url: str
    title: str
    snippet: str
    note: str


#: Characters of a result's snippet shown in its row.
SNIPPET_CHARS = 300


def _verdict_cell(result: SearchResultRecord) -> tuple[str, str]:
    """(verdict, explanation) of one result: a judged rating, or a known-item match."""
    if "det_match" in result:
        judge = result.get("judge_match")
        verdict = "gold" if result["det_match"] or judge else "—"
        note = result.get("match_why") or ""
        if judge is not None:
            note += f" · judge: {'yes' if judge else 'no'}"
        return verdict, note
    if result.get("rating") is not None:
        return f"{result['rating']} {result['label']}", result.get("reasoning") or ""
    return f"judge error: {result.get('judge_error', '')}", ""


def search_case_html(case: Mapping[str, Any]) -> Markup:
    """A search case: the engine's results in rank order with their verdicts (a judged
    rating and its reasoning, or whether the result carries the known-item gold and why)."""
    rows = []
    for rank, result in enumerate(case.get("results", []), start=1):
        verdict, note = _verdict_cell(result)
        rows.append(ResultRow(rank, verdict, result["url"], result.get("title") or "",
                              (result.get("snippet") or "")[:SNIPPET_CHARS], note))
    gold = case.get("gold_text")
    return render("report/search_case.html.j2", engine=case["engine"], query=case["query"],
                  error=case.get("search_error"),
                  gold=None if gold is None else str(gold), rows=rows)


def search_case_score(case: SearchCaseRecord) -> str:
    """A search case's score in one short cell: the judged ratings in rank order (best
    first, so the column sorts by it), or the known-item hit rank; empty without a verdict
    (an error or a skip)."""
    if case.get("verdict") is None:
        return ""
    return decided_case_score(case)


def decided_case_score(case: Mapping[str, Any]) -> str:
    """The score of a search case that has a verdict (see ``search_case_score``)."""
    if "hit_rank" in case:
        return "miss" if case["hit_rank"] is None else f"hit @{case['hit_rank']}"
    ratings = [r.get("rating") for r in case.get("results", [])]
    shown = " ".join("?" if rating is None else str(rating) for rating in ratings)
    best = max((rating for rating in ratings if rating is not None), default=0)
    return f"best {best} · {shown}" if ratings else "no results"
