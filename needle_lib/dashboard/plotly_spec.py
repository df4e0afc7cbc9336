"""The Plotly figures Needle writes as plain dicts, declared.

``site.figure_html`` writes such a dict as it is, without Plotly's validation (that was most
of a year-long site's build time), so nothing but these types checks it: a misspelt key
here would be a chart Plotly silently draws wrong. Each type declares the keys of Plotly's
figure reference that Needle sets, and only those.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, NotRequired, TypedDict


class ErrorBars(TypedDict):
    """A bar trace's ``error_x``/``error_y``: asymmetric, from the data."""

    type: Literal["data"]
    symmetric: bool
    array: list[float]
    arrayminus: list[float]
    color: str
    thickness: NotRequired[float]


class Title(TypedDict):
    text: str


class LineStyle(TypedDict):
    color: str
    dash: Literal["dash", "solid"]


class Markers(TypedDict):
    symbol: list[str]
    size: int


class Scatter(TypedDict):
    """A line over runs: ``x`` are ISO times, ``y`` None where the line breaks."""

    type: Literal["scatter"]
    x: list[str]
    y: list[float | None]
    name: str
    mode: Literal["lines+markers"]
    connectgaps: bool
    line: LineStyle
    marker: NotRequired[Markers]
    hovertext: NotRequired[list[str]]
    hoverinfo: NotRequired[Literal["text"]]


class Axis(TypedDict, total=False):
    type: Literal["date"]
    range: list[float] | list[datetime]
    title: Title
    tickformat: str
    dtick: int


class Legend(TypedDict):
    title: Title


class NoLine(TypedDict):
    width: int


class Band(TypedDict):
    """A shaded time slot (a missing run), the plot's full height."""

    type: Literal["rect"]
    xref: Literal["x"]
    yref: Literal["paper"]
    x0: datetime
    x1: datetime
    y0: int
    y1: int
    fillcolor: str
    line: NoLine
    layer: Literal["below"]


class Layout(TypedDict):
    title: Title
    height: int
    legend: Legend
    yaxis: Axis
    xaxis: Axis
    shapes: NotRequired[list[Band]]


class FigureSpec(TypedDict):
    """A figure as Plotly's JSON shape: traces and layout."""

    data: list[Scatter]
    layout: Layout
