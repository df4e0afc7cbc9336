"""HTML pages around Plotly figures: offline, UTF-8, with navigation back to the index.

Plotly's JavaScript is written once next to ``index.html`` and every page loads it by a
relative path, so the dashboard opens from disk with no network (no CDN, nothing leaves the
machine) and a hundred pages do not carry a hundred 4 MB copies of it.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from datetime import date, datetime
from html import escape
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io._json as pio_json
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from needle_lib.dashboard.plotly_spec import FigureSpec
from needle_lib.names import inside
from needle_lib.templates import macro, render

PLOTLY_JS = "plotly.min.js"
INDEX = "index.html"
#: Marks a page as Needle's, so a rebuild removes exactly the pages it wrote before.
GENERATOR = '<meta name="generator" content="needle dashboard">'

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
nav { margin-bottom: 1em; font-size: 0.95em; }
nav a { margin-right: 1.2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.incomplete td { outline: 2px solid #d62728; }
tr.invalid td { color: #777; background: #f3f3f3; }
.flag { color: #d62728; font-weight: bold; }
.notes li { color: #8a4b00; }
tr.errors td { background: #fff4f4; }
details.query { margin: 0.4em 0; }
details.query summary { cursor: pointer; }
"""


def write_plotly_js(out: Path) -> None:
    """Bundle Plotly's JavaScript once; rewritten only when the installed version differs."""
    target = out / PLOTLY_JS
    script = get_plotlyjs()
    if not target.exists() or target.read_text(encoding="utf-8") != script:
        target.write_text(script, encoding="utf-8")


def clear_pages(out: Path) -> None:
    """Remove the pages an earlier build wrote under ``out`` (and folders left empty).

    A rebuild must not leave pages of corpora or cohorts that are gone from the results;
    anything else in ``out`` is the user's and stays.
    """
    _folder.cache_clear()  # folders left empty are removed below
    if not out.is_dir():
        return
    for page in out.rglob("*.html"):
        with page.open("rb") as handle:
            head = handle.read(1024)
        if GENERATOR.encode() in head:
            page.unlink()
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def figure_html(fig: go.Figure | FigureSpec) -> str:
    """A figure as a ``<div>`` plus inline script, relying on the page's bundled Plotly.
    Its text is escaped first (``_escape_text``): every chart passes here.

    Written here rather than by ``plotly.io.to_html``, which validates the figure again
    and encodes its JSON three times over: a site of a year of runs has charts of
    thousands of points, and that cost was most of its build. A plain
    ``{"data": [...], "layout": {...}}`` dict (charts built by our own code in the
    documented trace shape) is never validated; a ``go.Figure`` was validated as it was
    built."""
    spec = _escape_text(fig.to_plotly_json() if isinstance(fig, go.Figure) else fig,
                        inside_text=False)
    layout = spec.get("layout", {})
    data_json, layout_json = _script_json(spec.get("data", [])), _script_json(layout)
    height = layout.get("height", layout.get("template", {}).get("layout", {}).get("height"))
    div_height = f"{height}px" if isinstance(height, int | float) else "100%"
    plot_id = str(uuid.uuid4())
    return (f'<div style="height:{div_height}; width:100%;"><div id="{plot_id}" '
            'class="plotly-graph-div" style="height:100%; width:100%;"></div><script>'
            f'window.PLOTLYENV=window.PLOTLYENV || {{}}; if (document.getElementById('
            f'"{plot_id}")) {{ Plotly.newPlot("{plot_id}", {data_json}, {layout_json}, '
            f"{_CONFIG}) }};</script></div>")


_CONFIG = json.dumps({"displaylogo": False, "responsive": True})
#: Characters that must not appear raw in JSON inside a ``<script>`` (as Plotly swaps them).
_SCRIPT_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"))


def _script_json(value: Any) -> str:
    """Compact ASCII JSON safe inside a script element; times as ISO strings (as Plotly
    writes them). Anything else the plain encoder refuses (NaN, numpy values) goes through
    Plotly's own encoder, which knows those."""
    try:
        text = json.dumps(value, separators=(",", ":"), allow_nan=False, default=_iso)
    except (TypeError, ValueError):
        return pio_json.to_json_plotly(value, engine="json")
    for raw, safe in _SCRIPT_SAFE:
        text = text.replace(raw, safe)
    return text


def _iso(value: Any) -> str:
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


#: Figure keys whose strings Plotly renders as its HTML subset (``<a href>``, ``<b>``…).
_PLOTLY_TEXT_KEYS = frozenset({"x", "y", "name", "text", "hovertext", "title", "ticktext",
                               "annotations", "labels"})


def _escape_text(value: Any, *, inside_text: bool) -> Any:
    if isinstance(value, str):
        if not inside_text or not ("<" in value or "&" in value or ">" in value):
            return value  # most labels (every time on an axis) need nothing
        return escape(value, quote=False).replace("&lt;br&gt;", "<br>")
    if isinstance(value, dict):
        return {k: _escape_text(v, inside_text=inside_text or k in _PLOTLY_TEXT_KEYS)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escape_text(v, inside_text=inside_text) for v in value]
    return value


PARTS = "dashboard/parts.html.j2"


def link(href: str, text: str) -> str:
    return str(macro(PARTS, "link")(href, text))


def table(headers: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> str:
    """An HTML table; each row is (css class, cells made by ``cell``)."""
    return str(macro(PARTS, "table")(
        headers, [(css, [Markup(c) for c in cells]) for css, cells in rows]))


def cell(text: str, *, numeric: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("num" if numeric else "", css) if c)
    return str(macro(PARTS, "cell")(text, classes))


def write_page(out: Path, relative: str, title: str, body: str,
               nav: Sequence[tuple[str, str]] = ()) -> Path:
    """Write one page at ``out/relative``; ``nav`` is (href relative to out, text) links.
    ``body`` is the page's HTML (built by this package's renderers).

    Links and the Plotly script are made relative to the page, so the tree can be moved or
    zipped and still work.
    """
    path = _page_path(out, relative)
    up = "../" * relative.count("/")
    links = [] if relative == INDEX else \
        [(up + INDEX, "← index"), *((up + href, text) for href, text in nav)]
    html = render("dashboard/page.html.j2", generator=Markup(GENERATOR), title=title,
                  style=Markup(STYLE), up=up, plotly_js=PLOTLY_JS, nav=links,
                  body=Markup(body)) + "\n"
    try:
        path.write_text(html, encoding="utf-8")
    except FileNotFoundError:  # its folder was removed since this build made it
        _folder.cache_clear()
        path = _page_path(out, relative)
        path.write_text(html, encoding="utf-8")
    return path


def _page_path(out: Path, relative: str) -> Path:
    """``out/relative`` with its folder made, refusing a path that resolves outside
    ``out``. Each folder is resolved once per build (``clear_pages`` forgets them): a
    year of runs is thousands of pages in a handful of folders."""
    folder, _, name = relative.rpartition("/")
    if name in ("", ".", ".."):
        path = inside(out, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    path = _folder(out, folder) / name
    return inside(out, relative) if path.is_symlink() else path


@functools.lru_cache(maxsize=1024)
def _folder(out: Path, folder: str) -> Path:
    path = inside(out, folder) if folder else out
    path.mkdir(parents=True, exist_ok=True)
    return path
