"""``needle compare --html``: one self-contained page with each flipped case side by side.

The figures say how much two runs differ; this page shows why, case by case: A's answer
on the left and B's on the right, each rendered as the run's own report renders a case
(a recall target's coloured line diff, a search query's ranked results and verdicts).
Inline styles only, like the pytest-html extras, so the file reads right offline.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from needle_lib.metrics.flips import Flip
from needle_lib.templates import render

STYLE = ("body{font-family:sans-serif;margin:1.5em}table.needle-flip{border-collapse:collapse;"
         "width:100%;table-layout:fixed}table.needle-flip td,table.needle-flip th{border:1px "
         "solid #ccc;vertical-align:top;padding:.4em;overflow-x:auto}h2{margin-top:1.5em}")


def flips_page(title: str, summary: Sequence[str], sides: tuple[str, str],
               flips: Sequence[tuple[Flip, str, str]]) -> str:
    """The page: ``summary`` lines (plain text), then per flip a two-column row of A's and
    B's renderings (HTML from ``report.html``). ``sides`` names A and B (plain text)."""
    return render("report/flips.html.j2", title=title, style=Markup(STYLE), summary=summary,
                  sides=sides, flips=[(flip, Markup(left), Markup(right))
                                      for flip, left, right in flips]) + "\n"
