"""Plotly figures of the cross-bench pages: price, latency, the borrowing graph."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from needle_lib.dashboard.overview_views import Latency
from needle_lib.search.prices import Price


def price_figure(title: str, axis: str, points: dict[str, float], prices: dict[str, Price],
                 colours: dict[str, str], *, reversed_y: bool = False) -> go.Figure:
    """Quality (y) against USD per 1,000 queries (x); engines without a price are not drawn
    (the page lists them as unknown)."""
    priced = [e for e in points if e in prices]
    fig = go.Figure(go.Scatter(
        x=[prices[e].per_1k for e in priced], y=[points[e] for e in priced],
        mode="markers+text", text=priced, textposition="top center",
        marker={"size": 12, "color": [colours.get(e, "#555") for e in priced]},
        hovertext=[f"{e}: {points[e]:.3f} at ${prices[e].per_1k:.2f} per 1k queries "
                   f"({prices[e].source}, {prices[e].as_of})" for e in priced],
        hoverinfo="text"))
    top = max((prices[e].per_1k for e in priced), default=1.0)
    fig.update_xaxes(title="USD per 1,000 queries", range=[-0.05 * top - 0.5, top * 1.15 + 0.5])
    if reversed_y:
        fig.update_yaxes(title=axis, autorange="reversed")
    else:  # a score: the whole 0–1 scale, so a small gap does not look like a chasm
        fig.update_yaxes(title=axis, range=[0, 1.05])
    fig.update_layout(title=title, height=420, showlegend=False)
    return fig


def latency_figure(latencies: dict[str, Latency], colours: dict[str, str]) -> go.Figure:
    """A dumbbell per engine: p50 to p95 seconds, fastest median on top."""
    engines = sorted((e for e in latencies if latencies[e].p50 is not None),
                     key=lambda e: latencies[e].p50 or 0.0)
    fig = go.Figure()
    for engine in engines:
        cell = latencies[engine]
        ends = [v for v in (cell.p50, cell.p95) if v is not None]
        fig.add_trace(go.Scatter(x=ends, y=[engine] * len(ends), mode="lines+markers",
                                 line={"color": colours.get(engine, "#555"), "width": 4},
                                 marker={"size": 10, "symbol": ["circle", "diamond"]},
                                 showlegend=False, hoverinfo="text",
                                 hovertext=[f"{engine} p50 {cell.p50:.2f} s",
                                            f"{engine} p95 {cell.p95 or 0:.2f} s"][:len(ends)]))
    longest = max((latencies[e].p95 or latencies[e].p50 or 0.0 for e in engines), default=1.0)
    fig.update_xaxes(title="seconds per request (● p50, ◆ p95)", range=[0, longest * 1.1 + 0.1])
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_layout(title="Latency, last 7 days: median (p50) to p95 per engine",
                      height=160 + 32 * len(engines))
    return fig


def latency_trend_figure(trend: dict[str, list[tuple[str, float]]],
                         colours: dict[str, str]) -> go.Figure:
    fig = go.Figure()
    days = sorted({day for series in trend.values() for day, _ in series})
    for engine, series in trend.items():
        fig.add_trace(go.Scatter(x=[d for d, _ in series], y=[v for _, v in series],
                                 name=engine, mode="lines+markers" if len(days) < 30 else "lines",
                                 line={"color": colours.get(engine, "#555")}))
    fig.update_xaxes(title="day (UTC)", type="category" if len(days) < 3 else "date",
                     tickformat="%b %d")
    fig.update_yaxes(title="median p50 seconds", rangemode="tozero")
    fig.update_layout(title="Latency trend: each day's median p50 per engine", height=420,
                      legend={"title": "engine"})
    return fig


def borrowing_figure(engines: list[str], rates: dict[tuple[str, str], float],
                     suspicious: dict[tuple[str, str], int], colours: dict[str, str]) -> go.Figure:
    """Engines on a circle; an edge per pair, as thick as the pair's shared URLs per query
    (red when it has suspicious queries). Independent indexes leave thin, grey edges."""
    angle = {e: 2 * math.pi * i / max(1, len(engines)) for i, e in enumerate(engines)}
    where = {e: (math.cos(a), math.sin(a)) for e, a in angle.items()}
    top = max(rates.values(), default=0.0) or 1.0
    fig = go.Figure()
    for (a, b), rate in sorted(rates.items(), key=lambda item: item[1]):
        if a not in where or b not in where or rate <= 0:
            continue
        flagged = suspicious.get((a, b), 0) > 0
        fig.add_trace(go.Scatter(
            x=[where[a][0], where[b][0]], y=[where[a][1], where[b][1]], mode="lines",
            line={"width": 1 + 9 * rate / top,
                  "color": "rgba(214,39,40,0.7)" if flagged else "rgba(120,120,120,0.45)"},
            hoverinfo="text", showlegend=False,
            hovertext=f"{a} × {b}: {rate:.2f} shared URLs per query; "
                      f"{suspicious.get((a, b), 0)} suspicious queries"))
    fig.add_trace(go.Scatter(
        x=[where[e][0] for e in engines], y=[where[e][1] for e in engines],
        mode="markers+text", text=engines, textposition="top center", showlegend=False,
        marker={"size": 16, "color": [colours.get(e, "#555") for e in engines]},
        hoverinfo="text"))
    fig.update_xaxes(visible=False, range=[-1.4, 1.4])
    fig.update_yaxes(visible=False, range=[-1.3, 1.3], scaleanchor="x")
    fig.update_layout(title="Borrowing graph: edge width = shared URLs per query, red = "
                            "suspicious sharing", height=560)
    return fig
