"""Confidence intervals for the last seven days of each bench (``ci.json``).

A week's leaderboard pools every scored (run, query) cell: the point is the mean over cells,
which weights each run by the queries it scored. Cells are not independent in two ways —
one query (or a query's topic) is hard in every run, and one run (an engine's bad hour, a
judge drift) is bad for every query — so the interval is a cluster bootstrap, once with
queries as clusters and once with runs, and the wider of the two is reported. Where one
clustering has a single cluster there is no spread to measure, and the entry says so
("not enough runs") instead of showing a zero-width interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from needle_lib.continuous.runs import iso, parse_ts
from needle_lib.contract.history import Interval as WindowInterval
from needle_lib.contract.history import Intervals, RunRow, ScoresRow
from needle_lib.metrics.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    cluster_bootstrap_means,
)

WINDOW_DAYS = 7
WINDOW = timedelta(days=WINDOW_DAYS)
METHOD = ("percentile cluster bootstrap of the mean over (run, query) cells; clustered by "
          "query and by run, the wider interval of the two")


def window_end(rows: Iterable[RunRow]) -> datetime | None:
    """The newest run's start: windows end at the data, not the clock, so a rebuilt
    dashboard of the same history shows the same figures."""
    return max((parse_ts(r.ts) for r in rows), default=None)


def in_window(row: RunRow, end: datetime) -> bool:
    return parse_ts(row.ts) > end - WINDOW


def _pair(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _entry(cells: list[tuple[str, str, float]], by_query: Interval | None,
           by_run: Interval | None) -> WindowInterval:
    queries = {q for _, q, _ in cells}
    runs = {r for r, _, _ in cells}
    note = []
    if len(runs) < 2:
        note.append(f"not enough runs ({len(runs)} in the window; an interval needs 2)")
    if len(queries) < 2:
        note.append(f"not enough queries ({len(queries)} scored)")
    low = high = None
    if by_query is not None and by_run is not None and not note:
        low, high = min(by_query.low, by_run.low), max(by_query.high, by_run.high)
    return WindowInterval(
        point=sum(v for _, _, v in cells) / len(cells),
        lo=low, hi=high,
        by_query=_pair(by_query), by_run=_pair(by_run),
        n_cells=len(cells), n_queries=len(queries), n_runs=len(runs),
        note="; ".join(note) or None,
    )


def confidence_intervals(scores: list[ScoresRow], *, end: datetime | None,
                         resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                         confidence: float = DEFAULT_CONFIDENCE) -> Intervals:
    """``ci.json``: per bench, metric and engine, the window's point and interval."""
    runs: dict[str, list[str]] = {}
    cells: dict[str, dict[str, dict[str, list[tuple[str, str, float]]]]] = {}
    for row in sorted(scores, key=lambda r: r.ts):
        if end is None or not in_window(row, end):
            continue
        runs.setdefault(row.bench, []).append(row.run_id)
        for metric, by_engine in row.metrics.items():
            for engine, values in by_engine.items():
                target = cells.setdefault(row.bench, {}).setdefault(metric, {})
                target.setdefault(engine, []).extend(
                    (row.run_id, qid, v) for qid, v in zip(row.qids, values, strict=True)
                    if v is not None)
    benches: dict[str, dict[str, dict[str, WindowInterval]]] = {}
    for bench, metrics in cells.items():
        for metric, engines in metrics.items():
            scored = {e: c for e, c in engines.items() if c}
            by_query = cluster_bootstrap_means(
                {e: [(q, v) for _, q, v in c] for e, c in scored.items()},
                resamples=resamples, seed=seed, confidence=confidence)
            by_run = cluster_bootstrap_means(
                {e: [(r, v) for r, _, v in c] for e, c in scored.items()},
                resamples=resamples, seed=seed, confidence=confidence)
            benches.setdefault(bench, {})[metric] = {
                e: _entry(c, by_query[e], by_run[e]) for e, c in scored.items()}
    return Intervals(
        confidence=confidence, resamples=resamples, seed=seed, window_days=WINDOW_DAYS,
        window_start=iso(end - WINDOW) if end else None,
        window_end=iso(end) if end else None,
        method=METHOD, runs=runs, benches=benches,
    )
