"""``needle compare --html``: one self-contained page with each flipped case side by side.

The figures say how much two runs differ; this page shows why, case by case: A's answer
on the left and B's on the right, each rendered as the run's own report renders a case
(a recall target's coloured line diff, a search query's ranked results and verdicts).
Inline styles only, like the pytest-html extras, so the file reads right offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from needle_lib.metrics.flips import Flip

STYLE = ("body{font-family:sans-serif;margin:1.5em}table.needle-flip{border-collapse:collapse;"
         "width:100%;table-layout:fixed}table.needle-flip td,table.needle-flip th{border:1px "
         "solid #ccc;vertical-align:top;padding:.4em;overflow-x:auto}h2{margin-top:1.5em}")


def flips_page(title: str, summary: Sequence[str], sides: tuple[str, str],
               flips: Sequence[tuple[Flip, str, str]]) -> str:
    """The page: ``summary`` lines (plain text), then per flip a two-column row of A's and
    B's renderings (already escaped HTML). ``sides`` names A and B (plain text)."""
    parts = [f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(title)}"
             f"</title><style>{STYLE}</style></head><body><h1>{escape(title)}</h1>",
             "<pre>" + escape("\n".join(summary)) + "</pre>"]
    if not flips:
        parts.append("<p>No case flipped.</p>")
    for flip, left, right in flips:
        parts.append(
            f'<h2 class="needle-flip-head">{escape(flip.direction)}: {escape(flip.key)}</h2>'
            f'<table class="needle-flip"><tr><th>A: {escape(sides[0])} — '
            f"{escape(flip.a.score)}</th><th>B: {escape(sides[1])} — {escape(flip.b.score)}"
            f"</th></tr><tr><td>{left}</td><td>{right}</td></tr></table>")
    parts.append("</body></html>\n")
    return "".join(parts)
