"""What the search pages show, computed from a history directory (pure: rows in, figures out).

Every figure covers the same seven-day window that ``ci.json`` covers (ending at the newest
run, not at the clock), and weights each run by the queries it scored, so a leaderboard
point equals the interval's point. Missing runs are found against each bench's cadence, so
a silent outage shows up as a gap instead of a line drawn straight through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from msgspec import UnsetType

from needle_lib.continuous.ci import WINDOW, in_window, window_end
from needle_lib.continuous.runs import METRICS, parse_ts
from needle_lib.continuous.schedule import SCHEDULE
from needle_lib.continuous.store import Site
from needle_lib.contract.history import HistoryRow, KnownItemRow, OverlapRow, UniquenessRow
from needle_lib.metrics.ndcg import ULTIMATE

SHARING_KEYS = ("jaccard_sum", "num_shared3", "num_suspect", "low_shared_urls", "num_queries",
                "shared_urls")
METRIC_TITLES = {"ndcg": "nDCG@{k}", "recall": "recall@{k}", "mrr": "MRR@{k}"}


@dataclass(frozen=True)
class Interval95:
    lo: float | None
    hi: float | None
    note: str | None


@dataclass
class EngineStanding:
    """One engine's window on the leaderboard."""

    engine: str
    points: dict[str, float | None]
    intervals: dict[str, Interval95]
    runs: int
    scored: int
    search_errors: int
    judge_errors: int
    skipped: int
    incomplete_runs: int
    p50_s: float | None
    p95_s: float | None


@dataclass
class BenchView:
    """One bench's rows and figures; built once per page build and not changed after (its
    engine and run lists are computed once)."""

    bench: str
    kind: str
    k: int
    rows: list[HistoryRow]  # every history row of the bench, oldest first
    window: list[HistoryRow]  # the rows inside the window
    standings: list[EngineStanding] = field(default_factory=list)
    missing: list[datetime] = field(default_factory=list)
    period: timedelta | None = None
    #: The window's end (the history's newest run, every bench's), found once.
    end: datetime | None = None

    @property
    def metrics(self) -> tuple[str, ...]:
        return METRICS[self.kind]

    def metric_title(self, metric: str) -> str:
        return METRIC_TITLES[metric].format(k=self.k)

    @cached_property
    def engines(self) -> list[str]:
        """Engines in first-seen order, ``ultimate`` last."""
        seen = dict.fromkeys(r.engine for r in self.rows if r.engine != ULTIMATE)
        return [*seen, *([ULTIMATE] if any(r.engine == ULTIMATE for r in self.rows)
                         else [])]

    @cached_property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(r.run_id for r in self.rows))

    @cached_property
    def window_runs(self) -> list[str]:
        return list(dict.fromkeys(r.run_id for r in self.window))


def _weighted(rows: list[HistoryRow], metric: str) -> float | None:
    pairs = [(value, r.num_scored) for r in rows
             if (value := r.metric(metric)) is not None and r.num_scored]
    total = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / total if total else None


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _interval(site: Site, bench: str, metric: str, engine: str) -> Interval95:
    entry = site.ci.get(bench, metric, engine) if site.ci else None
    if entry is None:
        return Interval95(None, None, "no scored queries in the window")
    return Interval95(entry.lo, entry.hi, entry.note)


def _standing(site: Site, view: BenchView, engine: str) -> EngineStanding:
    rows = [r for r in view.window if r.engine == engine]
    return EngineStanding(
        engine=engine,
        points={m: _weighted(rows, m) for m in view.metrics},
        intervals={m: _interval(site, view.bench, m, engine) for m in view.metrics},
        runs=len(rows), scored=sum(r.num_scored for r in rows),
        search_errors=sum(r.search_errors for r in rows),
        judge_errors=sum(r.judge_errors for r in rows),
        skipped=sum(r.skipped for r in rows),
        incomplete_runs=sum(not r.complete for r in rows),
        p50_s=_mean([r.p50_s for r in rows]), p95_s=_mean([r.p95_s for r in rows]),
    )


def _floor(moment: datetime, period: timedelta) -> datetime:
    if period >= timedelta(days=1):
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.replace(minute=0, second=0, microsecond=0)


def missing_runs(rows: list[HistoryRow], period: timedelta, end: datetime) -> list[datetime]:
    """Cadence slots (hours or days, UTC) inside the window, from the bench's first run on,
    in which no run started."""
    if not rows:
        return []
    starts = [parse_ts(r.ts) for r in rows]
    covered = {_floor(s, period) for s in starts}
    slot = _floor(max(min(starts), end - WINDOW), period)
    missing = []
    while slot <= _floor(end, period):
        if slot not in covered:
            missing.append(slot)
        slot += period
    return missing


def bench_views(site: Site) -> list[BenchView]:
    """One view per bench in the history, in schedule order (others after, by name)."""
    end = window_end(site.history)
    by_bench: dict[str, list[HistoryRow]] = {}
    for row in site.history:
        by_bench.setdefault(row.bench, []).append(row)
    order = [b for b in SCHEDULE if b in by_bench] + sorted(set(by_bench) - set(SCHEDULE))
    views = []
    for bench in order:
        rows = by_bench[bench]
        view = BenchView(bench=bench, kind=rows[-1].kind, k=rows[-1].k,
                         rows=rows, window=[r for r in rows if end and in_window(r, end)],
                         end=end)
        view.standings = sorted((_standing(site, view, e) for e in view.engines),
                                key=lambda s: _rank_key(view, s))
        if bench in SCHEDULE and end is not None:
            view.period = SCHEDULE[bench].period
            view.missing = missing_runs(view.window, view.period, end)
        views.append(view)
    return views


def _rank_key(view: BenchView, standing: EngineStanding) -> tuple[int, float]:
    """Engines by the headline metric (best first), ``ultimate`` (the pool) last."""
    point = standing.points[view.metrics[0]]
    return int(standing.engine == ULTIMATE) * 2 + int(point is None), -(point or 0.0)


def mean_jaccard(overlap: list[OverlapRow], bench: str, end: datetime | None
                 ) -> dict[tuple[str, str], dict[str, float]]:
    """Per engine pair, the window's sums and mean Jaccard (Σ Jaccard / Σ queries)."""
    sums: dict[tuple[str, str], dict[str, float]] = {}
    for row in overlap:
        if row.bench != bench or end is None or not in_window(row, end):
            continue
        cell = sums.setdefault((row.a, row.b), dict.fromkeys(SHARING_KEYS, 0))
        for key, value in row.sums().items():
            cell[key] += value
    for cell in sums.values():
        cell["mean_jaccard"] = cell["jaccard_sum"] / cell["num_queries"] if cell[
            "num_queries"] else 0.0
    return sums


#: Per-engine counts the uniqueness pages sum over a window (``uniqueness_counts``).
UNIQUENESS_KEYS = ("unique_urls", "total_urls", "relevant_unique_urls", "relevant_unique_of",
                   "relevant_exclusive_urls", "relevant_total_urls", "num_queries")


def uniqueness_counts(row: UniquenessRow) -> dict[str, int]:
    """One ``uniqueness.jsonl`` row as the counts a window sums.

    ``relevant_unique_of`` is the relevant URLs of the rows that know
    ``relevant_unique_urls`` (the denominator of its share). Rows published before
    ``relevant_exclusive_urls`` existed stored that count (relevant URLs no other family
    returned at all) under ``relevant_unique_urls``: it is read as what it was, and such a
    row adds nothing to the relevant-unique share instead of mixing two measures in one sum.
    """
    counts = {"unique_urls": row.unique_urls, "total_urls": row.total_urls,
              "relevant_total_urls": row.relevant_total_urls, "num_queries": row.num_queries}
    if isinstance(row.relevant_exclusive_urls, UnsetType):
        return {**counts, "relevant_exclusive_urls": row.relevant_unique_urls,
                "relevant_unique_urls": 0, "relevant_unique_of": 0}
    return {**counts, "relevant_exclusive_urls": row.relevant_exclusive_urls,
            "relevant_unique_urls": row.relevant_unique_urls,
            "relevant_unique_of": row.relevant_total_urls}


def uniqueness_totals(uniqueness: list[UniquenessRow], bench: str, end: datetime | None
                      ) -> dict[str, dict[str, int]]:
    """Per engine, the window's URL counts (``UNIQUENESS_KEYS``) summed over runs."""
    totals: dict[str, dict[str, int]] = {}
    for row in uniqueness:
        if row.bench != bench or end is None or not in_window(row, end):
            continue
        cell = totals.setdefault(row.engine, dict.fromkeys(UNIQUENESS_KEYS, 0))
        for key, value in uniqueness_counts(row).items():
            cell[key] += value
    return totals


def group_trends(view: BenchView) -> dict[str, dict[str, dict[str, list[tuple[str, float]]]]]:
    """Known-item breakdowns over time: group → value → engine → [(ts, recall)]."""
    trends: dict[str, dict[str, dict[str, list[tuple[str, float]]]]] = {}
    for row in view.rows:
        if not isinstance(row, KnownItemRow):
            continue
        for group, cells in row.groups.items():
            for value, cell in cells.items():
                if cell.recall is None:
                    continue
                series = trends.setdefault(group, {}).setdefault(value, {})
                series.setdefault(row.engine, []).append((row.ts, cell.recall))
    return trends
