"""Tables that export themselves, and the leaderboard as a standalone SVG.

Why: a team comparing search APIs pastes figures into a spreadsheet, a ticket or a blog
post. Every table on the search pages is built as a ``Table`` of plain-text cells, rendered
to HTML (escaped here, once) and written beside its page as ``<page>.<table>.csv`` and
``.md``, so the exported figures are the ones on the page. The SVG leaderboard is written
by hand (no browser or image library needed) and opens on its own.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import NamedTuple

from needle_lib.dashboard import site


class Cell(NamedTuple):
    """A named tuple, not a dataclass: a year of run pages holds a quarter of a million."""

    text: str
    css: str = ""
    #: A link target (relative); the cell's text is the link text.
    href: str | None = None

    def html(self) -> str:
        if self.href is not None:
            inner = site.link(self.href, self.text)
        else:  # most cells are figures, with nothing to escape
            text = self.text
            inner = escape(text) if "<" in text or "&" in text or ">" in text or '"' in text \
                or "'" in text else text
        return f"<td{_class_attr(self.css)}>{inner}</td>"


@functools.lru_cache(maxsize=64)
def _class_attr(css: str) -> str:
    return f' class="{escape(css)}"' if css else ""


def num(text: str, css: str = "") -> Cell:
    return Cell(text, f"num {css}" if css else "num")


@dataclass
class Table:
    """``name`` is the export's file stem; rows are (row css class, cells)."""

    name: str
    headers: list[str]
    rows: list[tuple[str, list[Cell]]] = field(default_factory=list)

    def add(self, cells: Sequence[Cell], css: str = "") -> None:
        self.rows.append((css, list(cells)))

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.headers)
        writer.writerows([c.text for c in cells] for _, cells in self.rows)
        return buffer.getvalue()

    def markdown(self) -> str:
        def line(values: Sequence[str]) -> str:
            return "| " + " | ".join(v.replace("|", "\\|").replace("\n", " ")
                                     for v in values) + " |"
        return "\n".join([line(self.headers), line(["---"] * len(self.headers)),
                          *(line([c.text for c in cells]) for _, cells in self.rows)]) + "\n"


class PageTables:
    """The tables of one page: each rendered with its export links, then written beside
    the page by ``write``."""

    def __init__(self, page: str) -> None:
        self.stem = Path(page).stem
        self.tables: list[Table] = []

    def html(self, table: Table, *, export: bool = True) -> str:
        """The table; with ``export``, its CSV and Markdown files are written with the page
        and linked under it."""
        head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
        body = "".join(f'<tr class="{escape(css)}">' + "".join(c.html() for c in cells)
                       + "</tr>" for css, cells in table.rows)
        html = (f'<table class="export" data-table="{escape(table.name)}"><thead><tr>{head}'
                f"</tr></thead><tbody>{body}</tbody></table>")
        if not export:
            return html
        self.tables.append(table)
        base = f"{self.stem}.{table.name}"
        return html + (f'<p class="exports">export: {site.link(base + ".csv", "CSV")} · '
                       f'{site.link(base + ".md", "Markdown")}</p>')

    def write(self, folder: Path) -> list[Path]:
        written = []
        for table in self.tables:
            for suffix, text in ((".csv", table.csv()), (".md", table.markdown())):
                path = folder / f"{self.stem}.{table.name}{suffix}"
                path.write_text(text, encoding="utf-8")
                written.append(path)
        return written


def write_page(out: Path, relative: str, title: str, body: str, tables: PageTables,
               nav: Sequence[tuple[str, str]] = ()) -> list[Path]:
    """``site.write_page`` plus the page's table exports."""
    page = site.write_page(out, relative, title, body, nav)
    return [page, *tables.write(page.parent)]


@dataclass(frozen=True)
class Bar:
    label: str
    point: float | None
    low: float | None = None
    high: float | None = None
    colour: str = "#1f77b4"


SVG_ROW = 26
SVG_LABEL = 190
SVG_PLOT = 420


def leaderboard_svg(title: str, subtitle: str, bars: list[Bar]) -> str:
    """A horizontal bar chart with interval whiskers on a 0–1 axis, self-contained SVG."""
    top = 58
    height = top + SVG_ROW * len(bars) + 40
    width = SVG_LABEL + SVG_PLOT + 150

    def x(value: float) -> float:
        return SVG_LABEL + SVG_PLOT * max(0.0, min(1.0, value))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
             f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="12" y="24" font-size="17" font-weight="bold">{escape(title)}</text>',
             f'<text x="12" y="44" font-size="12" fill="#555">{escape(subtitle)}</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" '
                     f'y2="{height - 34}" stroke="#ddd"/>'
                     f'<text x="{x(tick):.1f}" y="{height - 20}" font-size="11" '
                     f'text-anchor="middle" fill="#555">{tick:.2f}</text>')
    for row, bar in enumerate(bars):
        y = top + row * SVG_ROW
        parts.append(f'<text x="{SVG_LABEL - 8}" y="{y + 16}" font-size="13" '
                     f'text-anchor="end">{escape(bar.label)}</text>')
        if bar.point is None:
            parts.append(f'<text x="{SVG_LABEL + 4}" y="{y + 16}" font-size="12" '
                         'fill="#a00">not scored</text>')
            continue
        parts.append(f'<rect x="{SVG_LABEL}" y="{y + 4}" width="{x(bar.point) - SVG_LABEL:.1f}" '
                     f'height="{SVG_ROW - 8}" fill="{escape(bar.colour)}"/>')
        label = f"{bar.point:.3f}"
        if bar.low is not None and bar.high is not None:
            parts.append(f'<line x1="{x(bar.low):.1f}" y1="{y + SVG_ROW / 2}" '
                         f'x2="{x(bar.high):.1f}" y2="{y + SVG_ROW / 2}" stroke="#222" '
                         'stroke-width="1.5"/>')
            label += f" [{bar.low:.3f}, {bar.high:.3f}]"
        parts.append(f'<text x="{SVG_LABEL + SVG_PLOT + 8}" y="{y + 16}" font-size="12">'
                     f"{escape(label)}</text>")
    parts.append("</svg>\n")
    return "".join(parts)
