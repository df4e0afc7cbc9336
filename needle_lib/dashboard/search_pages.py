"""The search pages of the dashboard: per bench a leaderboard, trends, breakdown trends
(known-item benches), URL overlap, uniqueness and a browser of the latest run.

Built from a history directory (``needle publish``) or from single reports published in
memory; either way the pages read the same ``Site``. Errors, incomplete runs and missing
runs are shown where the figures are, never only in a footnote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from needle_lib.continuous.store import Site
from needle_lib.dashboard import search_charts as charts
from needle_lib.dashboard import site
from needle_lib.dashboard.judgements import browser_html
from needle_lib.dashboard.overview import OVERVIEW, overview_context, write_overview
from needle_lib.dashboard.overview_views import progress_text
from needle_lib.dashboard.search_views import (
    BenchView,
    EngineStanding,
    bench_views,
    group_trends,
    mean_jaccard,
    uniqueness_totals,
)
from needle_lib.dashboard.site_config import SiteConfig
from needle_lib.metrics.ndcg import ULTIMATE
from needle_lib.templates import macro

ROOT = "search"
PARTS = "dashboard/search_parts.html.j2"
MISSING_SHOWN = 12

@dataclass(frozen=True)
class SearchHistory:
    """What the search pages are built from, and where it came from (shown on the index)."""

    site: Site
    source: str
    config: SiteConfig = field(default_factory=SiteConfig)


@dataclass
class SearchBuild:
    pages: list[Path]
    index_section: str


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval_cell(standing: EngineStanding, metric: str) -> str:
    point, interval = standing.points[metric], standing.intervals[metric]
    if point is None:
        return site.cell("no scored queries", css="flag")
    return _part("interval_cell", point, interval.lo, interval.hi, str(interval.note))


def _missing_note(view: BenchView) -> str:
    if view.period is None:
        return ""
    if not view.missing:
        return _part("missing_note", 0, view.bench, "", "", "")
    every = "hour" if view.period < timedelta(days=1) else "day"
    form = "%Y-%m-%d %H:00" if every == "hour" else "%Y-%m-%d"
    spans = _spans(view.missing, view.period)
    shown = ", ".join(first.strftime(form) if first == last else
                      f"{first.strftime(form)} – {last.strftime(form)}"
                      for first, last in spans[:MISSING_SHOWN])
    more = f" … and {len(spans) - MISSING_SHOWN} more" if len(spans) > MISSING_SHOWN else ""
    return _part("missing_note", len(view.missing), view.bench, every, shown, more)


def _spans(slots: list[datetime], period: timedelta) -> list[tuple[datetime, datetime]]:
    """Consecutive missing slots as (first, last) spans."""
    spans: list[tuple[datetime, datetime]] = []
    for slot in slots:
        if spans and slot - spans[-1][1] == period:
            spans[-1] = (spans[-1][0], slot)
        else:
            spans.append((slot, slot))
    return spans


def _leaderboard(view: BenchView) -> str:
    rows = []
    for position, standing in enumerate(view.standings, start=1):
        problems = standing.search_errors + standing.judge_errors + standing.incomplete_runs
        rows.append(("errors" if problems else "", [
            site.cell(str(position), numeric=True),
            site.cell(standing.engine + (" (pooled ceiling)" if standing.engine == ULTIMATE
                                         else "")),
            *(_interval_cell(standing, m) for m in view.metrics),
            site.cell(str(standing.runs), numeric=True),
            site.cell(str(standing.scored), numeric=True),
            site.cell(str(standing.search_errors), numeric=True,
                      css="flag" if standing.search_errors else ""),
            site.cell(str(standing.judge_errors), numeric=True,
                      css="flag" if standing.judge_errors else ""),
            site.cell(str(standing.skipped), numeric=True),
            site.cell(str(standing.incomplete_runs), numeric=True,
                      css="flag" if standing.incomplete_runs else ""),
            site.cell(_num(standing.p50_s, 2), numeric=True),
            site.cell(_num(standing.p95_s, 2), numeric=True),
        ]))
    headers = ["#", "engine", *(f"{view.metric_title(m)} [95 % CI]" for m in view.metrics),
               "runs", "queries scored", "search errors", "judge errors", "skipped",
               "incomplete runs", "p50 s", "p95 s"]
    runs = len(view.window_runs)
    return (site.figure_html(charts.leaderboard_figure(view))
            + _part("leaderboard_note", runs, len(view.runs))
            + _missing_note(view) + site.table(headers, rows))


def _trends(view: BenchView) -> str:
    return _missing_note(view) + "".join(
        site.figure_html(charts.trend_figure(view, m)) for m in view.metrics) + \
        _part("trends_note")


def _groups(view: BenchView) -> str | None:
    trends = group_trends(view)
    if not trends:
        return None
    parts = [_part("groups_intro")]
    for group, values in trends.items():
        parts.append(_part("group_heading", group))
        parts.extend(site.figure_html(charts.group_trend_figure(view, group, value, series))
                     for value, series in values.items())
    return "".join(parts)


def _overlap(view: BenchView, history: Site) -> str:
    engines = [e for e in view.engines if e != ULTIMATE]
    sums = mean_jaccard(history.overlap, view.bench, view.end)
    rows = [("errors" if cell["num_suspect"] else "", [
        site.cell(a), site.cell(b), site.cell(f"{cell['mean_jaccard']:.3f}", numeric=True),
        site.cell(str(int(cell["num_queries"])), numeric=True),
        site.cell(str(int(cell["num_shared3"])), numeric=True),
        site.cell(str(int(cell["low_shared_urls"])), numeric=True),
        site.cell(str(int(cell["num_suspect"])), numeric=True),
    ]) for (a, b), cell in sorted(sums.items(), key=lambda item: -item[1]["mean_jaccard"])]
    return (site.figure_html(charts.overlap_figure(
                engines, sums, f"{view.bench} — URL overlap, last 7 days"))
            + _part("overlap_note")
            + site.table(["engine A", "engine B", "mean Jaccard", "queries", "≥ 3 shared",
                          "shared low-rated URLs", "suspicious queries"], rows))


def _uniqueness(view: BenchView, history: Site) -> str:
    totals = uniqueness_totals(history.uniqueness, view.bench, view.end)
    colours = charts.engine_colours(view.engines)
    rows = [("", [site.cell(engine), *(site.cell(str(cell[k]), numeric=True) for k in (
        "unique_urls", "total_urls", "relevant_unique_urls", "relevant_unique_of",
        "relevant_exclusive_urls", "relevant_total_urls", "num_queries"))])
        for engine, cell in totals.items()]
    return (site.figure_html(charts.uniqueness_figure(
                totals, colours, f"{view.bench} — URLs no other engine family returned"))
            + _part("uniqueness_note")
            + site.table(["engine", "unique URLs", "URLs", "relevant unique", "of",
                          "relevant exclusive", "relevant", "queries"], rows))


def in_progress_html(history: Site, bench: str) -> str:
    """A note per run of the bench still waiting for parts (``continuous.parts``)."""
    return _part("in_progress", [(entry.run_id, entry.ts, progress_text(progress))
                                 for entry in history.in_progress(bench)
                                 if (progress := entry.progress) is not None])


def _latest(view: BenchView, history: Site) -> str | None:
    latest = history.latest.get(view.bench)
    pending = in_progress_html(history, view.bench)
    if latest is None or (view.bench, latest.run_id) not in history.reports:
        return pending or None
    run_id = latest.run_id
    return (pending + _part("latest", run_id, latest.ts, latest.source,
                            _run_status(latest.complete, latest.report.get("scored_cases")))
            + browser_html("../", [(f"{view.bench}/{run_id}", f"runs/{run_id}/")]))


def _bench_pages(view: BenchView, history: Site
                 ) -> dict[str, tuple[str, Callable[[], str | None]]]:
    return {
        "leaderboard.html": ("leaderboard", lambda: _leaderboard(view)),
        "trends.html": ("trends", lambda: _trends(view)),
        "breakdowns.html": ("breakdown trends", lambda: _groups(view)),
        "overlap.html": ("overlap", lambda: _overlap(view, history)),
        "uniqueness.html": ("uniqueness", lambda: _uniqueness(view, history)),
        "latest.html": ("latest run", lambda: _latest(view, history)),
    }


def _index_row(view: BenchView, links: dict[str, str], history: Site
               ) -> tuple[str, list[str]]:
    window = view.window
    errors = sum(r.search_errors + r.judge_errors for r in window)
    incomplete = len({r.run_id for r in window if not r.complete})
    latest = _part("latest_cell", view.rows[-1].ts,
                   [(entry.ts, progress_text(progress))
                    for entry in history.in_progress(view.bench)
                    if (progress := entry.progress) is not None])
    return ("errors" if errors or view.missing or incomplete else "", [
        site.cell(view.bench), site.cell(view.kind.replace("_", "-")),
        site.cell(f"{len(view.window_runs)} / {len(view.runs)}", numeric=True),
        latest,
        site.cell(str(len(view.missing)) if view.period else "—", numeric=True,
                  css="flag" if view.missing else ""),
        site.cell(str(incomplete), numeric=True, css="flag" if incomplete else ""),
        site.cell(str(errors), numeric=True, css="flag" if errors else ""),
        _part("links_cell", list(links.items())),
    ])


def write_search_pages(history: Site, out: Path, source: str,
                       config: SiteConfig | None = None) -> SearchBuild:
    """Write every bench's pages under ``out/search/<bench>/`` and the cross-bench pages
    under ``out/search/``; returns them and the index section linking them."""
    pages: list[Path] = []
    rows = []
    views = bench_views(history)
    if not views:
        return SearchBuild(pages, _part("index_head", source, None) + _waiting(history, views))
    overview_pages, extra = write_overview(
        overview_context(history, views, config or SiteConfig()), out)
    pages.extend(overview_pages)
    for view in views:
        built = {}
        for page, (text, make) in _bench_pages(view, history).items():
            body = make()
            if body is not None:
                built[page] = (text, body)
        nav = [(f"{ROOT}/{view.bench}/{page}", text) for page, (text, _) in built.items()]
        nav += list(extra.get(view.bench, {}).items())
        for page, (text, body) in built.items():
            pages.append(site.write_page(out, f"{ROOT}/{view.bench}/{page}",
                                         f"{view.bench} — {text}", body, nav))
        rows.append(_index_row(view, {href: text for href, text in nav}, history))
    table = site.table(["bench", "kind", "runs (7 days / all)", "latest run (UTC)",
                        "missing runs", "incomplete runs", "errors (7 days)", "pages"], rows)
    across = [(f"{ROOT}/{page}", text) for page, text in OVERVIEW.items()]
    return SearchBuild(pages, _part("index_head", source, across) + table
                       + _waiting(history, views))


def _waiting(history: Site, views: list[BenchView]) -> str:
    """Runs in progress of benches with no finished run yet (no pages to show them on)."""
    shown = {view.bench for view in views}
    return "".join(_part("bench_heading", bench) + in_progress_html(history, bench)
                   for bench in sorted({b for b, _ in history.reports} - shown)
                   if history.in_progress(bench))


def _run_status(complete: bool, scored_cases: int | None) -> str:
    """A run that scored nothing (every engine without its key, say) is named as such,
    never shown as a complete run."""
    if scored_cases == 0:
        return "nothing scored"
    return "complete" if complete else "incomplete"


def _part(name: str, *args: object) -> str:
    """One of the page parts in ``templates/dashboard/search_parts.html.j2``, as HTML."""
    return str(macro(PARTS, name)(*args))
