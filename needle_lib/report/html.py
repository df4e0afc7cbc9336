"""HTML renderings for pytest-html reports: a case's diff, the run summary table, and the
search cases' score cell and detail.

Inline styles only, so a self-contained report looks right offline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from needle_lib.recall.results import run_status
from needle_lib.report.search_summary import engine_summary
from needle_lib.report.terminal import (
    MEANINGS,
    STYLES,
    case_headline,
    composition_line,
    prompt_size,
)
from needle_lib.report.untrusted import result_link

COLORS = {
    "matched": "color:#777",
    "missing": "color:#e07000;font-weight:bold",
    "hallucinated": "color:#b58900;background:#fff8dc",
    "reindented": "color:#a020a0",
    "bonus": "color:#008b8b",
    "ineligible": "color:#bbb",
}


def _legend_html() -> str:
    items = (f'<span style="{COLORS[status]}"><code style="white-space:pre">'
             f"{escape(STYLES[status][0])}</code>{meaning}</span>"
             for status, meaning in MEANINGS.items())
    return '<span class="needle-legend">legend: ' + " · ".join(items) + "</span>"


def diff_html(case: dict[str, Any], diff: Iterable[Sequence[str]]) -> str:
    """The case's one rendering in the report: headline, composition, legend, coloured
    diff (the plain-text failure message is dropped from the log, see the controller)."""
    rows = []
    for status, text, *_ in diff:
        label = " (reindented)" if status == "reindented" else ""
        rows.append(
            f'<span class="needle-{status}" style="{COLORS[status]}">'
            f"{escape(STYLES[status][0] + text)}{label}</span>"
        )
    body = "\n".join(rows)
    return (
        f'<div class="needle-case"><p><b>{escape(case_headline(case))}</b><br>'
        f"{escape(composition_line(case['composition']))}<br>{_legend_html()}</p>"
        f'<pre style="font-family:monospace;white-space:pre">{body}</pre></div>'
    )


def summary_html(dumps: Sequence[dict[str, Any]]) -> str:
    head = ("corpus", "model", "prompt tokens", "cases", "passed", "failed", "errors",
            "skipped", "matched %", "pass rate %", "hallucinated", "reindented", "bonus", "status")
    rows = []
    for dump in dumps:
        s = dump["summary"]
        status = run_status(dump)
        cells = (dump["corpus"]["name"], dump["model"]["key"], prompt_size(s), s["cases"],
                 s["passed"], s["failed"], s["errors"], s["skipped"], s["matched_pct"],
                 s["pass_rate"], s["hallucinated"], s["reindented"], s["bonus"], status)
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
    return (
        '<h2>Needle recall summary</h2><table id="needle-summary" border="1" '
        f'style="border-collapse:collapse">{header}{"".join(rows)}</table>'
    )


def search_summary_html(reports: Sequence[dict[str, Any]]) -> str:
    """Each search bench's engine table, as the terminal prints it at the end of a run."""
    tables = []
    for report in reports:
        summary = engine_summary(report)
        header = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in summary.head) + "</tr>"
        rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                       for row in summary.rows)
        tables.append(f"<h2>Needle {escape(report['benchmark'])} summary</h2>"
                      f"<p>{escape(summary.title)}</p><table class=\"needle-search-summary\" "
                      f'border="1" style="border-collapse:collapse">{header}{rows}</table>')
    return "".join(tables)


def _verdict_cell(result: dict[str, Any]) -> tuple[str, str]:
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


def search_case_html(case: Mapping[str, Any]) -> str:
    """A search case: the engine's results in rank order with their verdicts (a judged
    rating and its reasoning, or whether the result carries the known-item gold and why)."""
    rows = []
    for rank, result in enumerate(case.get("results", []), start=1):
        verdict, note = _verdict_cell(result)
        rows.append(
            f"<tr><td>{rank}</td><td>{escape(verdict)}</td>"
            f"<td>{result_link(result['url'], result.get('title') or '')}"
            f"<br><small>{escape((result.get('snippet') or '')[:300])}</small></td>"
            f"<td><small>{escape(note)}</small></td></tr>"
        )
    error = case.get("search_error")
    head = escape(f"{case['engine']} · {case['query']}") + (
        f" — search error: {escape(error)}" if error else "")
    gold = case.get("gold_text")
    known_item = gold is not None
    gold_line = f"<p>gold: {escape(str(gold))}</p>" if known_item else ""
    columns = ("match", "why") if known_item else ("rating", "judge reasoning")
    return (f'<div class="needle-search"><p><b>{head}</b></p>{gold_line}<table border="1" '
            f'style="border-collapse:collapse"><tr><th>#</th><th>{columns[0]}</th>'
            f'<th>result</th><th>{columns[1]}</th></tr>{"".join(rows)}</table></div>')


def search_case_score(case: dict[str, Any]) -> str:
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
