"""Plotly figures for recall runs. Pure functions: runs in, ``go.Figure`` out.

Every chart shows a run under its *axis label*, which carries the run's flags (⚠ INCOMPLETE,
✗ INELIGIBLE), and outlines incomplete runs in red, so a partial or errored run is never
read as a finished result, whichever chart a reader lands on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from needle_lib.contract.outcome import is_scored
from needle_lib.dashboard.paired import PairedComparison
from needle_lib.dashboard.plotly_spec import ErrorBars
from needle_lib.dashboard.positions import DEPTH_BINS, NovelSize, bin_label, depth_bin
from needle_lib.dashboard.runs import Run, lines_matched, lines_scored
from needle_lib.metrics.bootstrap import Interval

VALID_FILL = "#4c78a8"
SECOND_FILL = "#f58518"
INELIGIBLE_FILL = "#b0b0b0"
ALERT = "#d62728"
GAIN = "#2ca02c"
HEAT_SCALE = "RdYlGn"


def axis_labels(runs: Sequence[Run]) -> list[str]:
    """One unique label per run: model label, file stem when labels collide, then flags."""
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        counts[run.label] += 1
    labels = []
    for run in runs:
        name = run.label if counts[run.label] == 1 else f"{run.label} ({run.path.stem})"
        labels.append(f"{name} {run.status}".strip())
    return labels


def _outline(runs: Sequence[Run]) -> dict[str, list[Any]]:
    """Bar marker line: red and thick for incomplete runs, none otherwise."""
    return {"color": [ALERT if r.incomplete else "rgba(0,0,0,0)" for r in runs],
            "width": [3 if r.incomplete else 0 for r in runs]}


def _outline_columns(fig: go.Figure, runs: Sequence[Run]) -> None:
    """Red rectangle around each incomplete run's heat-map column."""
    for index, run in enumerate(runs):
        if run.incomplete:
            fig.add_shape(type="rect", x0=index - 0.5, x1=index + 0.5, y0=0, y1=1,
                          xref="x", yref="y domain", line={"color": ALERT, "width": 3})


def _error_bars(intervals: Sequence[Interval | None]) -> ErrorBars:
    return {
        "type": "data", "symmetric": False, "color": "#333",
        "array": [i.high - i.estimate if i else 0 for i in intervals],
        "arrayminus": [i.estimate - i.low if i else 0 for i in intervals],
    }


def _interval_text(interval: Interval | None) -> str:
    if interval is None:
        return "n/a"
    return f"{interval.estimate:.1f} % [{interval.low:.1f}, {interval.high:.1f}]"


#: Leaderboard geometry: a row tall enough to read with one run, margins for the title and
#: the panel titles above, the axis below; labels in a fixed size (not shrunk to fit a bar).
LEADER_ROW_PX = 48
LEADER_MARGIN = {"t": 110, "b": 50}
LABEL_FONT = 13
#: The x axis runs past 100 % so a label can sit right of a whisker that reaches 100 %.
LEADER_X_MAX = 120


def _label_x(interval: Interval | None) -> float:
    """Where a bar's label starts: right of its upper whisker, which it must never touch."""
    if interval is None:
        return 1.5
    return max(interval.high, interval.estimate) + 1.5


def leaderboard_figure(runs: Sequence[Run], title: str) -> go.Figure:
    """Matched % and pass rate per run, ranked, with 95 % bootstrap error bars.

    Percentages, never line counts: runs with fewer scored lines (errors, --no-comments)
    must not look worse merely for having a smaller denominator. Each value is written right
    of its error bar, not inside the bar, where a short bar shrank it and a whisker crossed it.
    """
    labels = axis_labels(runs)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("matched % (95 % CI)", "pass rate % (95 % CI)"))
    fills = [VALID_FILL if r.valid else INELIGIBLE_FILL for r in runs]
    patterns = ["" if r.valid else "/" for r in runs]
    for col, intervals in ((1, [r.matched_interval for r in runs]),
                           (2, [r.pass_interval for r in runs])):
        fig.add_trace(go.Bar(
            y=labels, x=[i.estimate if i else 0 for i in intervals], orientation="h",
            error_x=_error_bars(intervals),
            hovertext=[_interval_text(i) for i in intervals], hoverinfo="y+text",
            marker={"color": fills, "pattern": {"shape": patterns}, "line": _outline(runs)},
            showlegend=False,
        ), row=1, col=col)
        for label, interval in zip(labels, intervals, strict=True):
            fig.add_annotation(
                x=_label_x(interval), y=label, xanchor="left", showarrow=False,
                text=f"{interval.estimate:.1f} %" if interval else "n/a",
                font={"size": LABEL_FONT}, row=1, col=col)
        ticks = list(range(0, 101, 20))
        fig.update_xaxes(range=[0, LEADER_X_MAX], tickvals=ticks,
                         ticktext=[f"{t} %" for t in ticks], row=1, col=col)
    fig.update_yaxes(autorange="reversed", automargin=True, tickfont={"size": LABEL_FONT})
    fig.update_layout(title=title, bargap=0.35, margin=LEADER_MARGIN,
                      height=LEADER_MARGIN["t"] + LEADER_MARGIN["b"]
                      + LEADER_ROW_PX * max(1, len(runs)))
    return fig


def _targets(runs: Sequence[Run]) -> list[tuple[str, str]]:
    """(case_id, display name) of every target in any run, in corpus order."""
    seen: dict[str, tuple[str, int, str]] = {}
    for run in runs:
        for case in run.cases:
            seen.setdefault(case["case_id"], (str(case.get("file") or ""),
                                              int(case.get("start_line") or 0),
                                              str(case.get("function") or case["case_id"])))
    ordered = sorted(seen.items(), key=lambda item: (item[1][0], item[1][1], item[0]))
    return [(case_id, f"{name} :{line}") for case_id, (_, line, name) in ordered]


def heatmap_figure(runs: Sequence[Run], title: str) -> go.Figure:
    """Matched % per target (rows) and run (columns); errored or missing cases are blank."""
    labels = axis_labels(runs)
    targets = _targets(runs)
    by_run = [{c["case_id"]: c for c in run.cases} for run in runs]
    z: list[list[float | None]] = []
    hover: list[list[str]] = []
    for case_id, name in targets:
        z_row: list[float | None] = []
        hover_row: list[str] = []
        for cases in by_run:
            case = cases.get(case_id)
            if case is None:
                z_row.append(None)
                hover_row.append(f"{name}: not run")
            elif is_scored(case["outcome"]):
                scored = lines_scored(case)
                pct = 100 * lines_matched(case) / scored if scored else 0.0
                z_row.append(pct)
                hover_row.append(f"{name}: {pct:.0f} % matched, {case['outcome']}")
            else:
                z_row.append(None)
                hover_row.append(f"{name}: {case['outcome']} (not scored)")
        z.append(z_row)
        hover.append(hover_row)
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=[name for _, name in targets], zmin=0, zmax=100,
        colorscale=HEAT_SCALE, text=hover, hoverinfo="x+text", texttemplate="%{z:.0f}",
        colorbar={"title": "matched %"}, xgap=2, ygap=2,
    ))
    _outline_columns(fig, runs)
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    fig.update_xaxes(side="top", automargin=True, type="category")
    fig.update_layout(title=title, height=220 + 26 * len(targets),
                      plot_bgcolor="#eeeeee")
    return fig


def _share(part: dict[str, int]) -> float | None:
    return 100 * part["matched"] / part["total"] if part["total"] else None


def composition_figure(runs: Sequence[Run], title: str) -> go.Figure:
    """Code vs prose recall (%), and hallucinated / re-indented / bonus line counts.

    Re-indented lines are correct content in the wrong column, reported apart from
    hallucinations so a whitespace-normalising model is not charged for inventing code.
    """
    labels = axis_labels(runs)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("code vs prose recall (%)",
                                        "hallucinated · re-indented · bonus (lines)"))
    for name, key, colour in (("code", "code", VALID_FILL), ("prose", "prose", SECOND_FILL)):
        values = [_share(r.summary[key]) for r in runs]
        fig.add_trace(go.Bar(x=labels, y=values, name=f"{name} %", marker_color=colour,
                             marker_line=_outline(runs),
                             text=[f"{v:.0f}" if v is not None else "n/a" for v in values],
                             textposition="outside"), row=1, col=1)
    for name, colour in (("hallucinated", ALERT), ("reindented", "#9467bd"), ("bonus", GAIN)):
        fig.add_trace(go.Bar(x=labels, y=[r.summary[name] for r in runs], name=name,
                             marker_color=colour, marker_line=_outline(runs)), row=1, col=2)
    fig.update_yaxes(range=[0, 110], ticksuffix=" %", row=1, col=1)
    fig.update_xaxes(automargin=True, type="category")
    fig.update_layout(title=title, barmode="group", height=520)
    return fig


def paired_figure(result: PairedComparison, labels: tuple[str, str], title: str) -> go.Figure:
    """Side-by-side matched % per shared target, and the per-target difference B − A."""
    names = [c.case_id for c in result.cases]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.6, 0.4],
                        subplot_titles=("matched % per target",
                                        f"difference {labels[1]} − {labels[0]} (points)"))
    for label, values, colour, run in (
            (labels[0], [100 * c.a_ratio for c in result.cases], VALID_FILL, result.a),
            (labels[1], [100 * c.b_ratio for c in result.cases], SECOND_FILL, result.b)):
        fig.add_trace(go.Bar(x=names, y=values, name=label, marker_color=colour,
                             marker_line=_outline([run] * len(names))), row=1, col=1)
    deltas = [100 * c.delta for c in result.cases]
    fig.add_trace(go.Bar(x=names, y=deltas, name="B − A", showlegend=False,
                         marker_color=[GAIN if d > 0 else ALERT if d < 0 else "#999"
                                       for d in deltas]), row=2, col=1)
    fig.update_yaxes(range=[0, 105], ticksuffix=" %", row=1, col=1)
    fig.update_yaxes(zeroline=True, zerolinecolor="#333", row=2, col=1)
    fig.update_xaxes(type="category", automargin=True)
    fig.update_layout(title=title, barmode="group", height=640)
    return fig


def context_label(run: Run, size: NovelSize) -> str:
    """A column of the depth map: the context the run really used.

    The server's own count where the dump has one (the model's tokenizer, chat template
    included), else the manifest's estimate under the reference tokenizer, marked ≈.
    """
    measured = run.measured_prompt_tokens
    if measured is not None:
        return f"{size.corpus} · {measured / 1000:.1f}K tokens"
    return f"{size.corpus} · ≈{size.prompt_tokens / 1000:.1f}K tokens ({size.tokenizer})"


def depth_figure(runs: Sequence[Run], sizes: Sequence[NovelSize], title: str) -> go.Figure:
    """Matched % by relative depth (rows) × context length (columns) for one model.

    ``runs[i]`` ran on ``sizes[i]``. A target's depth comes from the manifest for that size,
    so each cell averages the same targets across columns (their depths match by design).
    """
    columns = [f"{context_label(run, size)} {run.status}".strip()
               for run, size in zip(runs, sizes, strict=True)]
    z: list[list[float | None]] = [[None] * len(runs) for _ in range(DEPTH_BINS)]
    hover = [["no target at this depth"] * len(runs) for _ in range(DEPTH_BINS)]
    for col, (run, size) in enumerate(zip(runs, sizes, strict=True)):
        cells: dict[int, list[tuple[str, int, int]]] = defaultdict(list)
        for case in run.valid_cases:
            name = case.get("function") or case["case_id"]
            position = size.positions.get(name)
            if position is not None:
                cells[depth_bin(position)].append((name, lines_matched(case),
                                                   lines_scored(case)))
        for row, members in cells.items():
            scored = sum(m[2] for m in members)
            z[row][col] = 100 * sum(m[1] for m in members) / scored if scored else 0.0
            hover[row][col] = "<br>".join(f"{n}: {m}/{s}" for n, m, s in members)
    fig = go.Figure(go.Heatmap(
        z=z, x=columns, y=[bin_label(i) for i in range(DEPTH_BINS)], zmin=0, zmax=100,
        colorscale=HEAT_SCALE, text=hover, hoverinfo="x+y+z+text", texttemplate="%{z:.0f}",
        colorbar={"title": "matched %"}, xgap=2, ygap=2,
    ))
    _outline_columns(fig, runs)
    fig.update_yaxes(title="depth in context", autorange="reversed", type="category")
    fig.update_xaxes(title="context used (prompt tokens)", side="top", type="category")
    fig.update_layout(title=title, height=520, plot_bgcolor="#eeeeee")
    return fig
