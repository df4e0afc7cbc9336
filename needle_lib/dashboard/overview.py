"""The search site's pages across benches: standings, price, latency, index independence,
methodology, the judgement browser, and a permalink page per run.

Each page is built from the history alone (``Site``) plus prices (engine specs, engine
files, the site config); every table is an exported ``Table``. Pages live under
``search/``; a run's permalink is ``search/<bench>/runs/<run_id>.html``, stable across
rebuilds, and links to the run's archived artifacts when the site config names the archive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
from markupsafe import Markup

from needle_lib.continuous.archive import file_url
from needle_lib.continuous.store import MISSING_REPORT, Site
from needle_lib.contract.history import HistoryRow, KnownItemRow
from needle_lib.dashboard import overview_charts as charts
from needle_lib.dashboard import site
from needle_lib.dashboard.exports import Bar, Cell, PageTables, Table, leaderboard_svg, num
from needle_lib.dashboard.exports import write_page as write_with_tables
from needle_lib.dashboard.judgements import (
    browser_html,
    gold_words,
    write_browser_script,
    write_run_data,
)
from needle_lib.dashboard.overview_views import (
    RunLine,
    engine_ranks,
    engines_by_mean_rank,
    latency,
    latency_by_engine,
    latency_trend,
    mean_rank,
    pooled_sharing,
    pooled_uniqueness,
    progress_text,
    ranked,
    window_runs,
)
from needle_lib.dashboard.search_charts import engine_colours
from needle_lib.dashboard.search_views import BenchView, EngineStanding
from needle_lib.dashboard.site_config import SiteConfig, engine_prices
from needle_lib.judge.verdict import LABELS
from needle_lib.metrics.ndcg import GAINS, ULTIMATE
from needle_lib.metrics.overlap import RELEVANT_RATING, SHARED_MANY, SHARED_TOP
from needle_lib.search.prices import Price
from needle_lib.search.registry import known_engines
from needle_lib.templates import macro

ROOT = "search"
PARTS = "dashboard/overview.html.j2"
OVERVIEW = {"standings.html": "standings", "price.html": "price", "latency.html": "latency",
            "independence.html": "index independence", "methodology.html": "methodology",
            "judgements.html": "judgements"}
SUSPICIOUS = (f"Suspicious sharing: a query where two engines' top {SHARED_TOP} results "
              f"share at least {SHARED_MANY} URLs (after URL normalisation). Independent "
              "indexes rarely agree that much; a pair that does often is likely serving one "
              "index (resold, cached or borrowed). Shared URLs per query is the mean number of "
              "URLs both engines returned for a query both answered.")


@dataclass
class Context:
    history: Site
    views: list[BenchView]
    config: SiteConfig
    prices: dict[str, Price]
    colours: dict[str, str]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _figure(standing: EngineStanding, metric: str) -> str:
    point, interval = standing.points[metric], standing.intervals[metric]
    if point is None:
        return "not scored"
    if interval.lo is None or interval.hi is None:
        return f"{point:.3f} (no interval)"
    return f"{point:.3f} [{interval.lo:.3f}, {interval.hi:.3f}]"


def _nav() -> list[tuple[str, str]]:
    return [(f"{ROOT}/{page}", title) for page, title in OVERVIEW.items()]


# --- standings ---------------------------------------------------------------------------------

def _standings(ctx: Context, tables: PageTables) -> str:
    engines = engines_by_mean_rank(ctx.views)
    ranks = engine_ranks(ctx.views)
    headers = ["engine", "mean rank"]
    for view in ctx.views:
        headers += [f"{view.bench} {view.metric_title(m)} [95 % CI]" for m in view.metrics]
        headers.append(f"{view.bench} rank")
    table = Table("standings", headers)
    cells_by_view = [ranked(view) for view in ctx.views]
    for engine in engines:
        row = [Cell(engine), num(_fmt(mean_rank(ranks.get(engine, [])), 1))]
        for view, cells in zip(ctx.views, cells_by_view, strict=True):
            cell = cells.get(engine)
            if cell is None:
                row += [num("not run", "missing") for _ in view.metrics] + [num("—")]
                continue
            row += [num(_figure(cell.standing, m), "interval") for m in view.metrics]
            row.append(num("—" if cell.rank is None else str(cell.rank), "rank"))
        table.add(row)
    return _part("standings", Markup(tables.html(table)), [view.bench for view in ctx.views])


def leaderboard_svg_of(view: BenchView, colours: dict[str, str]) -> str:
    metric = view.metrics[0]
    bars = []
    for standing in view.standings:
        if standing.engine == ULTIMATE:
            continue
        interval = standing.intervals[metric]
        bars.append(Bar(standing.engine, standing.points[metric], interval.lo, interval.hi,
                        colours.get(standing.engine, "#555")))
    window = view.window
    span = f"{window[0].ts[:10]} – {window[-1].ts[:10]}" if window else "no runs"
    return leaderboard_svg(f"{view.bench}: {view.metric_title(metric)}, last 7 days",
                           f"{len(view.window_runs)} run(s), {span} UTC · 95 % intervals · "
                           "Needle search benchmarks", bars)


# --- price -------------------------------------------------------------------------------------

def _price(ctx: Context, tables: PageTables) -> str:
    engines = engines_by_mean_rank(ctx.views)
    table = Table("prices", ["engine", "USD per 1,000 queries", "source", "as of"])
    for engine in engines:
        price = ctx.prices.get(engine)
        if price is None:
            table.add([Cell(engine), num("unknown", "unknown"), Cell("no published price "
                                                                     "known"), Cell("—")])
        else:
            table.add([Cell(engine), num(f"{price.per_1k:.2f}"), Cell(price.source),
                       Cell(price.as_of)])
    unknown = [e for e in engines if e not in ctx.prices]
    ranks = engine_ranks(ctx.views)
    means = {e: mean_rank(r) for e, r in ranks.items()}
    figures = [_figure_html(charts.price_figure(
        "Overall: mean rank across benches against price", "mean rank (1 = best)",
        {e: v for e, v in means.items() if v is not None}, ctx.prices, ctx.colours,
        reversed_y=True))]
    for view in ctx.views:
        metric = view.metrics[0]
        points = {s.engine: s.points[metric] for s in view.standings
                  if s.engine != ULTIMATE and s.points[metric] is not None}
        figures.append(_figure_html(charts.price_figure(
            f"{view.bench}: {view.metric_title(metric)} (last 7 days) against price",
            view.metric_title(metric), {e: v for e, v in points.items() if v is not None},
            ctx.prices, ctx.colours)))
    return _part("price", Markup(tables.html(table)), unknown, figures)


# --- latency -----------------------------------------------------------------------------------

def _latency(ctx: Context, tables: PageTables) -> str:
    pooled = latency_by_engine(ctx.views)
    headers = ["engine", "p50 s (all benches)", "p95 s (all benches)", "runs timed"]
    headers += [f"{v.bench} p50 / p95 s" for v in ctx.views]
    table = Table("latency", headers)
    for engine in sorted(pooled, key=lambda e: pooled[e].p50 or float("inf")):
        cell = pooled[engine]
        row = [Cell(engine), num(_fmt(cell.p50, 2)), num(_fmt(cell.p95, 2)), num(str(cell.runs))]
        for view in ctx.views:
            per = latency([r for r in view.window if r.engine == engine])
            row.append(num(f"{_fmt(per.p50, 2)} / {_fmt(per.p95, 2)}" if per.runs else "—"))
        table.add(row)
    return _part("latency", _figure_html(charts.latency_figure(pooled, ctx.colours)),
                 Markup(tables.html(table)),
                 _figure_html(charts.latency_trend_figure(latency_trend(ctx.history),
                                                          ctx.colours)))


# --- independence ------------------------------------------------------------------------------

def _independence(ctx: Context, tables: PageTables) -> str:
    sharing = pooled_sharing(ctx.history, ctx.views)
    engines = sorted({e for pair in sharing for e in pair})
    pairs = Table("sharing", ["engine A", "engine B", "queries both answered",
                              "shared URLs", "shared URLs per query", "mean Jaccard",
                              f"suspicious queries (≥ {SHARED_MANY} of top {SHARED_TOP})",
                              "suspicious share", "shared low-rated URLs"])
    for (a, b), cell in sorted(sharing.items(), key=lambda item: -item[1]["shared_rate"]):
        flagged = cell["num_shared3"] > 0
        pairs.add([Cell(a), Cell(b), num(str(int(cell["num_queries"]))),
                   num(str(int(cell["shared_urls"]))), num(f"{cell['shared_rate']:.2f}"),
                   num(f"{cell['mean_jaccard']:.3f}"),
                   num(str(int(cell["num_shared3"])), "flag" if flagged else ""),
                   num(f"{cell['suspicious_rate']:.1%}"),
                   num(str(int(cell["low_shared_urls"])))], "errors" if flagged else "")
    unique = pooled_uniqueness(ctx.history, ctx.views)
    uniq = Table("uniqueness", ["engine", "unique URLs", "URLs", "unique share",
                                "relevant unique", "of", "relevant unique share",
                                "relevant exclusive", "relevant", "relevant exclusive share"])
    for engine, counts in sorted(unique.items(), key=lambda item: -_share(
            item[1], "relevant_unique_urls", "relevant_unique_of")):
        uniq.add([Cell(engine), num(str(counts["unique_urls"])),
                  num(str(counts["total_urls"])),
                  num(f"{_share(counts, 'unique_urls', 'total_urls'):.1%}"),
                  num(str(counts["relevant_unique_urls"])),
                  num(str(counts["relevant_unique_of"])),
                  num(f"{_share(counts, 'relevant_unique_urls', 'relevant_unique_of'):.1%}"),
                  num(str(counts["relevant_exclusive_urls"])),
                  num(str(counts["relevant_total_urls"])),
                  num(f"{_share(counts, 'relevant_exclusive_urls', 'relevant_total_urls'):.1%}")])
    rates = {pair: cell["shared_rate"] for pair, cell in sharing.items()}
    suspicious = {pair: int(cell["num_shared3"]) for pair, cell in sharing.items()}
    return _part("independence", SUSPICIOUS,
                 _figure_html(charts.borrowing_figure(engines, rates, suspicious, ctx.colours)),
                 Markup(tables.html(pairs)), RELEVANT_RATING, LABELS[RELEVANT_RATING],
                 Markup(tables.html(uniq)))


def _share(cell: Mapping[str, float], part: str, whole: str) -> float:
    return cell[part] / cell[whole] if cell[whole] else 0.0


# --- methodology -------------------------------------------------------------------------------

METRICS_TEXT = {
    "ndcg": "nDCG@K: discounted cumulative gain of the engine's top K against a pooled ideal "
            "(the best rating each URL got from any engine); gains per rating: "
            + ", ".join(f"{r} ({LABELS[r]}) → {g}" for r, g in sorted(GAINS.items()))
            + "; a repeated URL in one list gains 0; queries where no engine found anything "
              "relevant carry no signal and are left out.",
    "recall": "recall@K: the share of queries whose gold (the known item) is in the engine's "
              "top K; matched by the bench's matcher, with a backstop judge where enabled.",
    "mrr": "MRR@K: the mean of 1 / rank of the first result carrying the gold (0 when none "
           "does in the top K).",
}


def _methodology(ctx: Context, tables: PageTables) -> str:
    setup = Table("benches", ["bench", "kind", "queries (latest run)", "query file",
                              "sha256", "top K", "snippet cap (chars)", "judge model",
                              "judge prompt", "sampling", "Needle version", "git revision"])
    origins = Table("sources", ["bench", "query origins (last 24 h)", "breakdown groups "
                                "(freshness windows, buckets)"])
    for view in ctx.views:
        latest = ctx.history.latest.get(view.bench)
        header = (latest.report.get("header") if latest else None) or {}
        queries = header.get("queries") or {}
        judge = header.get("judge") or {}
        package = header.get("package") or {}
        sampling = header.get("sampling") or {}
        setup.add([Cell(view.bench), Cell(view.kind.replace("_", "-")),
                   num(str(queries.get("count", "—"))),
                   Cell(Path(str(queries.get("path", "—"))).name),
                   Cell(str(queries.get("sha256", "—"))[:12]),
                   num(str(header.get("num_results", view.k))),
                   num(str(header.get("snippet_chars", "—"))),
                   Cell(str(judge.get("model", "none"))), Cell(str(judge.get("prompt_version",
                                                                             "—"))),
                   Cell(", ".join(f"{k} {v}" for k, v in sampling.items() if v is not None)
                        or "all queries"),
                   Cell(str(package.get("version", "—"))),
                   Cell(str(package.get("git_revision", "—"))[:12])])
        origins.add([Cell(view.bench), Cell(_origins(ctx.history, view.bench)),
                     Cell(_groups(view))])
    engines = Table("engines", ["engine", "mode", "timeout s", "defined in", "price per 1k"])
    known = known_engines()
    for engine in engines_by_mean_rank(ctx.views):
        spec = known.get(engine)
        price = ctx.prices.get(engine)
        engines.add([Cell(engine), Cell(spec.mode or "—" if spec else "unknown engine"),
                     num(f"{spec.timeout:g}" if spec else "—"),
                     Cell(spec.source if spec else "—"),
                     num("unknown" if price is None else f"{price.per_1k:.2f}")])
    files = ["history.jsonl", "overlap.jsonl", "uniqueness.jsonl", "scores.jsonl", "ci.json",
             "daily_queries.jsonl"]
    hub = ctx.config.hub
    return _part("methodology", list(METRICS_TEXT.values()),
                 ", ".join(f"{r} = {label}" for r, label in sorted(LABELS.items())),
                 Markup(tables.html(setup)), Markup(tables.html(origins)),
                 Markup(tables.html(engines)), files, hub,
                 file_url(hub, "daily_queries.jsonl") if hub else None)


def _origins(history: Site, bench: str) -> str:
    seen: dict[str, int] = {}
    for row in history.daily:
        if row["bench"] == bench:
            origin = row.get("query_origin")
            text = gold_words(origin) if isinstance(origin, dict) else str(
                origin or "not recorded")
            seen[text] = seen.get(text, 0) + 1
    if not seen:
        return "no queries in the last 24 h"
    top = sorted(seen.items(), key=lambda item: -item[1])[:8]
    return "; ".join(f"{text} ({count})" for text, count in top) + (
        f"; … {len(seen) - 8} more" if len(seen) > 8 else "")


def _groups(view: BenchView) -> str:
    groups: dict[str, set[str]] = {}
    for row in view.window:
        for group, cells in (row.groups if isinstance(row, KnownItemRow) else {}).items():
            groups.setdefault(group, set()).update(v for v in cells if v)
    return "; ".join(f"{g}: {', '.join(sorted(v))}" for g, v in groups.items() if v) or "—"


# --- runs ----------------------------------------------------------------------------------

def _run_page(ctx: Context, view: BenchView, run: RunLine, rows: list[HistoryRow],
              kept: bool, missing: bool = False) -> tuple[str, PageTables]:
    tables = PageTables(f"{run.run_id}.html")
    headers = ["engine", *(view.metric_title(m) for m in view.metrics), "queries scored",
               "search errors", "judge errors", "p50 s", "p95 s"]
    table = Table("engines", headers)
    for row in rows:
        problems = row.search_errors + row.judge_errors
        table.add([Cell(row.engine + (" (pooled ceiling)" if row.engine == ULTIMATE
                                      else "")),
                   *(num(_fmt(row.metric(m))) for m in view.metrics),
                   num(str(row.num_scored)),
                   num(str(row.search_errors), "flag" if row.search_errors else ""),
                   num(str(row.judge_errors), "flag" if row.judge_errors else ""),
                   num(_fmt(row.p50_s, 2)), num(_fmt(row.p95_s, 2))],
                  "errors" if problems else "")
    browser = Markup(browser_html("../../", [(f"{view.bench}/{run.run_id}",
                                              f"{run.run_id}/")])) if kept else ""
    # the table is not exported: a year of runs would be thousands of files, and these
    # figures are the run's rows in history.jsonl
    return _part("run_page", ROOT, view.bench, run, "complete" if run.complete else "incomplete",
                 Markup(tables.html(table, export=False)), ctx.config.hub, kept,
                 browser, missing, MISSING_REPORT), tables


def write_overview(ctx: Context, out: Path) -> tuple[list[Path], dict[str, dict[str, str]]]:
    """Every cross-bench page, each bench's SVG leaderboard, run list and run permalinks;
    returns the pages and, per bench, the extra pages to link from its navigation."""
    search_dir = out / ROOT
    pages: list[Path] = [write_browser_script(search_dir)]
    builders: dict[str, Callable[[Context, PageTables], str]] = {
        "standings.html": _standings, "price.html": _price, "latency.html": _latency,
        "independence.html": _independence, "methodology.html": _methodology,
        "judgements.html": _judgements}
    for page, build in builders.items():
        tables = PageTables(page)
        body = build(ctx, tables)
        pages += write_with_tables(out, f"{ROOT}/{page}", f"Search — {OVERVIEW[page]}", body,
                                   tables, _nav())
    extra: dict[str, dict[str, str]] = {}
    runs = window_runs(ctx.history)
    orphans = set(ctx.history.orphans())
    for view in ctx.views:
        svg = search_dir / view.bench / "leaderboard.svg"
        svg.parent.mkdir(parents=True, exist_ok=True)
        svg.write_text(leaderboard_svg_of(view, ctx.colours), encoding="utf-8")
        pages.append(svg)
        bench_runs = [r for r in runs if r.bench == view.bench]
        kept = {run_id for bench, run_id in ctx.history.reports if bench == view.bench}
        rows_of: dict[str, list[HistoryRow]] = {}
        for row in view.rows:
            rows_of.setdefault(row.run_id, []).append(row)
        for run in bench_runs:
            if run.progress is not None:  # no figures yet: listed, no permalink until done
                continue
            if run.run_id in kept:
                write_run_data(search_dir / view.bench / "runs" / run.run_id,
                               ctx.history.reports[view.bench, run.run_id])
            body, tables = _run_page(ctx, view, run, rows_of[run.run_id],
                                     run.run_id in kept,
                                     (view.bench, run.run_id) in orphans)
            pages += write_with_tables(out, f"{ROOT}/{view.bench}/runs/{run.run_id}.html",
                                       f"{view.bench} — run {run.run_id}", body, tables,
                                       [(f"{ROOT}/{view.bench}/runs.html", "runs"), *_nav()])
        tables = PageTables("runs.html")
        listing = Table("runs", ["run", "started (UTC)", "state", "engines", "errors",
                                 "judgements kept"])
        for run in bench_runs:
            pending = run.progress is not None
            listing.add([Cell(run.run_id,
                              href=None if pending else f"runs/{run.run_id}.html"),
                         Cell(run.ts), Cell(_state(run), "" if run.complete else "flag"),
                         num(str(run.engines)),
                         num(str(run.errors), "flag" if run.errors else ""),
                         Cell("—" if pending else "yes" if run.run_id in kept
                              else "report missing" if (view.bench, run.run_id) in orphans
                              else "archive only")],
                        "errors" if run.errors or not run.complete else "")
        pages += write_with_tables(out, f"{ROOT}/{view.bench}/runs.html",
                                   f"{view.bench} — every run",
                                   _part("run_list", len(bench_runs),
                                         Markup(tables.html(listing))), tables, _nav())
        extra[view.bench] = {f"{ROOT}/{view.bench}/runs.html": "runs"}
    return pages, extra


def _state(run: RunLine) -> str:
    if run.progress is not None:
        return progress_text(run.progress)
    return "complete" if run.complete else "incomplete"


def _judgements(ctx: Context, tables: PageTables) -> str:
    latest = [(bench, entry) for bench, entry in ctx.history.latest.items()
              if (bench, entry.run_id) in ctx.history.reports]
    runs = [(f"{bench}/{entry.run_id}", f"{bench}/runs/{entry.run_id}/")
            for bench, entry in latest]
    listed = ", ".join(f"{bench} run {entry.run_id}" for bench, entry in latest)
    return _part("judgements", listed, Markup(browser_html("", runs)) if latest else "")


def overview_context(history: Site, views: list[BenchView], config: SiteConfig) -> Context:
    engines = [e for view in views for e in view.engines]
    return Context(history, views, config, engine_prices(config),
                   engine_colours(list(dict.fromkeys(engines))))


def _figure_html(figure: go.Figure) -> Markup:
    return Markup(site.figure_html(figure))


def _part(name: str, *args: object) -> str:
    """A page's text around its tables and charts (``templates/dashboard/overview.html.j2``)."""
    return str(macro(PARTS, name)(*args))
