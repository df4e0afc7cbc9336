"""Tables that export themselves, and the leaderboard as a standalone SVG.

Why: a team comparing search APIs pastes figures into a spreadsheet, a ticket or a blog
post. Every table on the search pages is built as a ``Table`` of plain-text cells, rendered
to HTML by a template (autoescaped) and written beside its page as ``<page>.<table>.csv`` and
``.md``, so the exported figures are the ones on the page. The SVG leaderboard is written
from a template (no browser or image library needed) and opens on its own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from needle_lib.dashboard import site
from needle_lib.templates import render


class Cell(NamedTuple):
    """A named tuple, not a dataclass: a year of run pages holds a quarter of a million."""

    text: str
    css: str = ""
    #: A link target (relative); the cell's text is the link text.
    href: str | None = None


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
        if export:
            self.tables.append(table)
        base = f"{self.stem}.{table.name}" if export else None
        return str(render("dashboard/export_table.html.j2", table=table, base=base))

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


@dataclass(frozen=True)
class _Tick:
    x: str
    label: str


@dataclass(frozen=True)
class _Row:
    y: int
    label: str
    #: the bar's length in pixels; None: not scored
    width: str | None = None
    colour: str = ""
    mid: float = 0.0
    whisker: tuple[str, str] | None = None
    value: str = ""


def leaderboard_svg(title: str, subtitle: str, bars: list[Bar]) -> str:
    """A horizontal bar chart with interval whiskers on a 0–1 axis, self-contained SVG."""
    top = 58
    height = top + SVG_ROW * len(bars) + 40
    width = SVG_LABEL + SVG_PLOT + 150

    def x(value: float) -> str:
        return f"{SVG_LABEL + SVG_PLOT * max(0.0, min(1.0, value)):.1f}"

    rows = []
    for row, bar in enumerate(bars):
        y = top + row * SVG_ROW
        if bar.point is None:
            rows.append(_Row(y, bar.label))
            continue
        whisker = (x(bar.low), x(bar.high)) \
            if bar.low is not None and bar.high is not None else None
        value = f"{bar.point:.3f}" + (f" [{bar.low:.3f}, {bar.high:.3f}]" if whisker else "")
        rows.append(_Row(y, bar.label, f"{float(x(bar.point)) - SVG_LABEL:.1f}", bar.colour,
                         y + SVG_ROW / 2, whisker, value))
    return render("dashboard/leaderboard.svg.j2", title=title, subtitle=subtitle,
                  width=width, height=height, top=top,
                  ticks=[_Tick(x(t), f"{t:.2f}") for t in (0.0, 0.25, 0.5, 0.75, 1.0)],
                  rows=rows, label_x=SVG_LABEL - 8, plot_x=SVG_LABEL,
                  value_x=SVG_LABEL + SVG_PLOT + 8, bar_height=SVG_ROW - 8) + "\n"
