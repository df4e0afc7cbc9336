"""Figures across benches (pure: bench views and history rows in, records out).

Everything covers the benches' seven-day windows (as the per-bench leaderboards do), so a
standing on the overview equals the bench leaderboard's. Ranks count engines with a score
on the bench's headline metric (``ultimate``, the pooled ceiling, is not an engine and has
no rank).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from needle_lib.continuous.ci import in_window, window_end
from needle_lib.continuous.store import Site
from needle_lib.contract.history import HistoryRow, RunProgress
from needle_lib.dashboard.search_views import (
    SHARING_KEYS,
    BenchView,
    EngineStanding,
    mean_jaccard,
    uniqueness_totals,
)
from needle_lib.metrics.ndcg import ULTIMATE


@dataclass(frozen=True)
class Ranked:
    """One engine on one bench: its standing and its rank by the headline metric."""

    standing: EngineStanding
    rank: int | None


def ranked(view: BenchView) -> dict[str, Ranked]:
    headline = view.metrics[0]
    result: dict[str, Ranked] = {}
    position = 0
    for standing in view.standings:
        if standing.engine == ULTIMATE:
            continue
        scored = standing.points[headline] is not None
        position += scored
        result[standing.engine] = Ranked(standing, position if scored else None)
    return result


def engines_by_mean_rank(views: list[BenchView]) -> list[str]:
    """Every engine (not the pool), best mean rank first; unranked engines last."""
    ranks: dict[str, list[int]] = {}
    for view in views:
        for engine, cell in ranked(view).items():
            ranks.setdefault(engine, [])
            if cell.rank is not None:
                ranks[engine].append(cell.rank)
    return sorted(ranks, key=lambda e: (not ranks[e], mean_rank(ranks[e]) or 0.0, e))


def mean_rank(ranks: list[int]) -> float | None:
    return sum(ranks) / len(ranks) if ranks else None


def engine_ranks(views: list[BenchView]) -> dict[str, list[int]]:
    result: dict[str, list[int]] = {}
    for view in views:
        for engine, cell in ranked(view).items():
            if cell.rank is not None:
                result.setdefault(engine, []).append(cell.rank)
    return result


@dataclass(frozen=True)
class Latency:
    """Seconds per request over the window's runs (means of each run's p50 and p95)."""

    p50: float | None
    p95: float | None
    runs: int


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def latency(rows: list[HistoryRow]) -> Latency:
    timed = [(r.p50_s, r.p95_s) for r in rows if r.p50_s is not None and r.engine != ULTIMATE]
    return Latency(_mean([p50 for p50, _ in timed]),
                   _mean([p95 for _, p95 in timed if p95 is not None]), len(timed))


def latency_by_engine(views: list[BenchView]) -> dict[str, Latency]:
    rows: dict[str, list[HistoryRow]] = {}
    for view in views:
        for row in view.window:
            if row.engine != ULTIMATE:
                rows.setdefault(row.engine, []).append(row)
    return {engine: latency(r) for engine, r in rows.items()}


def latency_trend(site: Site) -> dict[str, list[tuple[str, float]]]:
    """Per engine, the median p50 of each UTC day's runs (all benches, whole history)."""
    days: dict[str, dict[str, list[float]]] = {}
    for row in site.history:
        if row.engine == ULTIMATE or row.p50_s is None:
            continue
        days.setdefault(row.engine, {}).setdefault(row.ts[:10], []).append(row.p50_s)
    return {engine: [(day, median(values)) for day, values in sorted(by_day.items())]
            for engine, by_day in days.items()}


def pooled_sharing(site: Site, views: list[BenchView]
                   ) -> dict[tuple[str, str], dict[str, float]]:
    """Per engine pair, the sharing sums over every bench's window (a pair's order is made
    canonical, so (a, b) and (b, a) from two benches add up)."""
    pooled: dict[tuple[str, str], dict[str, float]] = {}
    for view in views:
        for (a, b), cell in mean_jaccard(site.overlap, view.bench, view.end).items():
            pair = (a, b) if a <= b else (b, a)
            target = pooled.setdefault(pair, dict.fromkeys(SHARING_KEYS, 0.0))
            for key in SHARING_KEYS:
                target[key] += cell[key]
    for cell in pooled.values():
        queries = cell["num_queries"]
        cell["mean_jaccard"] = cell["jaccard_sum"] / queries if queries else 0.0
        cell["shared_rate"] = cell["shared_urls"] / queries if queries else 0.0
        cell["suspicious_rate"] = cell["num_shared3"] / queries if queries else 0.0
    return pooled


def pooled_uniqueness(site: Site, views: list[BenchView]) -> dict[str, dict[str, int]]:
    pooled: dict[str, dict[str, int]] = {}
    for view in views:
        for engine, cell in uniqueness_totals(site.uniqueness, view.bench, view.end).items():
            target = pooled.setdefault(engine, dict.fromkeys(cell, 0))
            for key, value in cell.items():
                target[key] += value
    return pooled


def progress_text(progress: RunProgress) -> str:
    """"in progress, k of N parts" for a run whose parts are not all published."""
    return f"in progress, {progress.have} of {progress.count} parts"


@dataclass
class RunLine:
    """A run as the run lists show it: its completeness and how many engine rows had
    errors; a run in progress (no rows yet) has its ``progress``."""

    bench: str
    run_id: str
    ts: str
    complete: bool
    engines: int = 0
    errors: int = 0
    in_window: bool = False
    progress: RunProgress | None = None


def window_runs(site: Site) -> list[RunLine]:
    """One line per run in the history, newest first."""
    end = window_end(site.history)
    runs: dict[tuple[str, str], RunLine] = {}
    for row in site.history:
        run = runs.setdefault((row.bench, row.run_id), RunLine(
            row.bench, row.run_id, row.ts, row.complete,
            in_window=bool(end and in_window(row, end))))
        if row.engine != ULTIMATE:
            run.engines += 1
            run.errors += row.search_errors + row.judge_errors
    for key, entry in site.reports.items():
        if entry.progress is not None and key not in runs:
            runs[key] = RunLine(entry.bench, entry.run_id, entry.ts, False,
                                engines=len(entry.report["header"]["engines"]),
                                progress=entry.progress)
    return sorted(runs.values(), key=lambda r: r.ts, reverse=True)
