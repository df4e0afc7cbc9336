"""Plotly figures for the search pages. Pure functions: views in, ``go.Figure`` out.

An engine keeps one colour on every page of a bench. Trend lines break where runs are
missing (a line drawn across an outage would invent results), missing slots are shaded red,
and a run with errors is marked ✕ (an incomplete one hollow), so a bad run is never read as
an ordinary point.
"""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import TypeVar

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from needle_lib.continuous.runs import parse_ts
from needle_lib.contract.history import HistoryRow
from needle_lib.dashboard.plotly_spec import ErrorBars, FigureSpec, Layout, Scatter
from needle_lib.dashboard.search_views import BenchView, EngineStanding
from needle_lib.metrics.ndcg import ULTIMATE

POOL_COLOUR = "#7f7f7f"
MISSING_FILL = "rgba(214, 39, 40, 0.12)"
ROW_PX = 30


def engine_colours(engines: list[str]) -> dict[str, str]:
    palette = qualitative.D3 + qualitative.Set2
    colours = {e: palette[i % len(palette)] for i, e in enumerate(
        e for e in engines if e != ULTIMATE)}
    return {**colours, ULTIMATE: POOL_COLOUR}


def _error_bars(points: list[float | None], standings: list[EngineStanding],
                metric: str) -> ErrorBars:
    ups, downs = [], []
    for point, standing in zip(points, standings, strict=True):
        lo, hi = standing.intervals[metric].lo, standing.intervals[metric].hi
        if point is None or lo is None or hi is None:
            ups.append(0.0)
            downs.append(0.0)
        else:
            ups.append(hi - point)
            downs.append(point - lo)
    return {"type": "data", "symmetric": False, "array": ups, "arrayminus": downs,
            "color": "#333", "thickness": 1.5}


def leaderboard_figure(view: BenchView) -> go.Figure:
    """The window's figure per engine with its 95 % interval; ``ultimate`` (the pooled
    ceiling) in grey."""
    standings = view.standings
    names = [s.engine for s in standings]
    colours = engine_colours(view.engines)
    fig = make_subplots(rows=1, cols=len(view.metrics), shared_yaxes=True,
                        horizontal_spacing=0.05,
                        subplot_titles=[f"{view.metric_title(m)} (95 % CI)"
                                        for m in view.metrics])
    for col, metric in enumerate(view.metrics, start=1):
        points = [s.points[metric] for s in standings]
        fig.add_trace(go.Bar(
            y=names, x=[p or 0 for p in points], orientation="h", showlegend=False,
            error_x=_error_bars(points, standings, metric),
            marker_color=[colours[n] for n in names],
            text=[f"{p:.3f}" if p is not None else "n/a" for p in points],
            textposition="inside", insidetextanchor="start",
            hovertext=[_interval_text(s, metric) for s in standings], hoverinfo="y+text",
        ), row=1, col=col)
        fig.update_xaxes(range=[0, 1.05], row=1, col=col)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(title=f"{view.bench} — last 7 days, weighted by queries scored",
                      height=170 + ROW_PX * len(names), bargap=0.25)
    return fig


def _interval_text(standing: EngineStanding, metric: str) -> str:
    point, interval = standing.points[metric], standing.intervals[metric]
    if point is None:
        return "no scored queries"
    if interval.lo is None:
        return f"{point:.3f} (no interval: {interval.note})"
    return f"{point:.3f} [{interval.lo:.3f}, {interval.hi:.3f}]"


Row = TypeVar("Row")


def _with_gaps(points: list[tuple[str, float | None, Row]], period: timedelta | None
               ) -> tuple[list[str], list[float | None], list[Row | None]]:
    """Insert a break (None) between runs further apart than 1.5 periods; each point's row
    (None at a break) comes back beside it."""
    xs: list[str] = []
    ys: list[float | None] = []
    rows: list[Row | None] = []
    previous = None
    for ts, value, row in points:
        moment = parse_ts(ts)
        if previous is not None and period is not None and moment - previous > 1.5 * period:
            xs.append((previous + (moment - previous) / 2).isoformat())
            ys.append(None)
            rows.append(None)
        xs.append(_axis_time(ts))
        ys.append(value)
        rows.append(row)
        previous = moment
    return xs, ys, rows


@functools.lru_cache(maxsize=65536)
def _axis_time(ts: str) -> str:
    """A run's time as the chart's JSON carries it (a year of runs repeats each time on
    every engine's line: formatted once)."""
    return parse_ts(ts).isoformat()


def _marker(row: HistoryRow | None) -> str:
    if row is None:
        return "circle"
    if row.search_errors or row.judge_errors:
        return "x"
    return "circle" if row.complete else "circle-open"


def _hover(engine: str, value: float | None, row: HistoryRow | None) -> str:
    if row is None:
        return ""
    text = f"{engine} · run {row.run_id}: {value:.3f}" if value is not None else (
        f"{engine} · run {row.run_id}: not scored")
    problems = [f"{count} {name}" for count, name in ((row.search_errors, "search errors"),
                                                     (row.judge_errors, "judge errors"))
                if count]
    if not row.complete:
        problems.append("incomplete run")
    return text + (f" ({', '.join(problems)})" if problems else "")


def _time_layout(view: BenchView, title: str, axis: str, height: int) -> Layout:
    """Layout of a chart over runs: the 0–1 scale, missing slots shaded (one band per slot),
    and, for one run, a day-wide axis: Plotly would zoom a lone moment to a
    sub-millisecond span."""
    layout: Layout = {"title": {"text": title}, "height": height,
                      "legend": {"title": {"text": "engine"}},
                      "yaxis": {"range": [0, 1.05], "title": {"text": axis}},
                      "xaxis": {"type": "date"}}
    if view.period is not None and view.missing:
        layout["shapes"] = [
            {"type": "rect", "xref": "x", "yref": "paper", "x0": slot,
             "x1": slot + view.period, "y0": 0, "y1": 1, "fillcolor": MISSING_FILL,
             "line": {"width": 0}, "layer": "below"} for slot in view.missing]
    moments = {r.ts for r in view.rows}
    if len(moments) == 1:
        moment = parse_ts(moments.pop())
        layout["xaxis"].update({"range": [moment - timedelta(hours=12),
                                          moment + timedelta(hours=12)],
                                "tickformat": "%b %d %H:%M", "dtick": 3 * 3600 * 1000})
    return layout


def _line(engine: str, colour: str, xs: list[str], ys: list[float | None]) -> Scatter:
    return {"type": "scatter", "x": xs, "y": ys, "name": engine, "mode": "lines+markers",
            "connectgaps": False,
            "line": {"color": colour, "dash": "dash" if engine == ULTIMATE else "solid"}}


def trend_figure(view: BenchView, metric: str) -> FigureSpec:
    """One line per engine over every run of the bench (the pool only where it is a
    ceiling worth seeing: recall, not nDCG, where it is 1 by definition)."""
    colours = engine_colours(view.engines)
    by_engine: dict[str, list[HistoryRow]] = {}
    for row in view.rows:
        by_engine.setdefault(row.engine, []).append(row)
    data: list[Scatter] = []
    for engine in view.engines:
        if engine == ULTIMATE and metric != "recall":
            continue
        rows = by_engine.get(engine, [])
        xs, ys, points = _with_gaps([(r.ts, r.metric(metric), r) for r in rows], view.period)
        line = _line(engine, colours[engine], xs, ys)
        line["marker"] = {"symbol": [_marker(p) for p in points], "size": 8}
        line["hovertext"] = [_hover(engine, y, p) for y, p in zip(ys, points, strict=True)]
        line["hoverinfo"] = "text"
        data.append(line)
    missing = f" · {len(view.missing)} missing run(s) shaded" if view.missing else ""
    title = f"{view.bench} — {view.metric_title(metric)} per run{missing}"
    return {"data": data, "layout": _time_layout(view, title, view.metric_title(metric), 420)}


def group_trend_figure(view: BenchView, group: str, value: str,
                       series: dict[str, list[tuple[str, float]]]) -> FigureSpec:
    """Recall of one breakdown cell (e.g. bucket = filings) per engine over runs."""
    colours = engine_colours(view.engines)
    data: list[Scatter] = []
    for engine in view.engines:
        if engine in series:
            xs, ys, _ = _with_gaps([(ts, v, None) for ts, v in series[engine]],
                                   view.period)
            data.append(_line(engine, colours[engine], xs, ys))
    return {"data": data, "layout": _time_layout(
        view, f"{view.bench} · {group} = {value}", view.metric_title("recall"), 340)}


def overlap_figure(engines: list[str], sums: dict[tuple[str, str], dict[str, float]],
                   title: str) -> go.Figure:
    """Mean Jaccard of every engine pair's URL sets (symmetric; the diagonal is 1)."""
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    for a in engines:
        z_row: list[float | None] = []
        text_row: list[str] = []
        for b in engines:
            cell = sums.get((a, b)) or sums.get((b, a))
            if a == b:
                z_row.append(1.0)
                text_row.append(a)
            elif cell is None:
                z_row.append(None)
                text_row.append(f"{a} × {b}: no shared queries")
            else:
                z_row.append(cell["mean_jaccard"])
                text_row.append(
                    f"{a} × {b}: mean Jaccard {cell['mean_jaccard']:.2f} over "
                    f"{int(cell['num_queries'])} queries; ≥ 3 shared URLs in "
                    f"{int(cell['num_shared3'])}; {int(cell['low_shared_urls'])} shared "
                    "low-rated URL(s)")
        z.append(z_row)
        text.append(text_row)
    fig = go.Figure(go.Heatmap(z=z, x=engines, y=engines, zmin=0, zmax=1, colorscale="Blues",
                               text=text, hoverinfo="text", texttemplate="%{z:.2f}",
                               colorbar={"title": "Jaccard"}, xgap=2, ygap=2))
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_xaxes(type="category", side="top", automargin=True)
    fig.update_layout(title=title, height=220 + 40 * len(engines))
    return fig


def uniqueness_figure(totals: dict[str, dict[str, int]], colours: dict[str, str],
                      title: str) -> go.Figure:
    """Share of an engine's URLs no other engine family returned: all; relevant ones no
    other family returned as relevant (unique); relevant ones it did not return at all
    (exclusive)."""
    engines = sorted(totals, key=lambda e: -_share(totals[e], "unique_urls", "total_urls"))
    fig = go.Figure()
    for label, part, whole, opacity in (
            ("all URLs: unique share", "unique_urls", "total_urls", 1.0),
            ("relevant URLs: unique share", "relevant_unique_urls", "relevant_unique_of", 0.7),
            ("relevant URLs: exclusive share", "relevant_exclusive_urls",
             "relevant_total_urls", 0.45)):
        shares = [_share(totals[e], part, whole) for e in engines]
        fig.add_trace(go.Bar(
            x=engines, y=shares, name=label, opacity=opacity,
            marker_color=[colours.get(e, POOL_COLOUR) for e in engines],
            text=[f"{totals[e][part]}/{totals[e][whole]}" for e in engines],
            textposition="outside"))
    fig.update_yaxes(range=[0, 1.1], tickformat=".0%")
    fig.update_layout(title=title, barmode="group", height=440)
    return fig


def _share(cell: dict[str, int], part: str, whole: str) -> float:
    return cell[part] / cell[whole] if cell[whole] else 0.0
