"""The search site from a published multi-bench history: news (hourly, with a failing
engine and missing hours), finance (daily, one day missing), scholar (one run) and legal
(one run split in two shard parts), rendered with `needle dashboard --site` and opened in
headless Chromium. Figures on the pages are checked against figures this test computes
from the raw reports, not from the site's own code."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import chromium, run_chromium
from search_runs import START, finance_run, header, known_case, news_run, write_report

from needle_lib.benches.runfiles import finish_run
from needle_lib.cli import main
from needle_lib.contract.history import RunEntry
from needle_lib.dashboard import site
from needle_lib.dashboard.judgements import browser_html, write_browser_script, write_run_data

NEWS = ("exa", "exa-instant", "brave")
PAGES = ("standings", "price", "latency", "independence", "methodology", "judgements")


def legal_parts(directory: Path) -> list[Path]:
    """One legal run split over two machines by query (``--shard I/2``)."""
    started = START + timedelta(days=2, hours=18)
    engines = ["exa", "keenable"]
    paths = []
    for part, queries in enumerate(((0, 1, 2), (3, 4, 5)), start=1):
        cases = [known_case(f"l{q}", f"case law {q}", e, 1 if (q + i) % 3 else None,
                            bucket="caselaw") for q in queries for i, e in enumerate(engines)]
        head = {**header("legal", "known_item", engines, 6, started), "bench": "legal"}
        head["started_at"] = (started + timedelta(seconds=part)).isoformat()
        path = directory / f"legal__legal__{started:%Y%m%d-%H%M%S}.shard-{part}-of-2.json"
        finish_run(path, head, cases)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path | list[Path]]:
    reports = tmp_path_factory.mktemp("reports")
    news = [news_run(reports, START + timedelta(days=day, hours=hour), seed=day * 10 + hour,
                     failing="brave" if (day, hour) == (1, 0) else None)
            for day in range(3) for hour in (0, 1)]
    finance = [finance_run(reports, START + timedelta(days=day), seed=day) for day in (0, 2)]
    t = START + timedelta(days=2, hours=12)
    scholar = [write_report(reports, {**header("scholar", "known_item", ["exa", "brave"], 4, t),
                                      "bench": "scholar"},
                            [known_case(f"s{q}", f"paper {q}", e, 2 if q % 2 else None,
                                        bucket="title")
                             for q in range(4) for e in ("exa", "brave")], t)]
    parts = legal_parts(reports)
    history = tmp_path_factory.mktemp("history")
    config = tmp_path_factory.mktemp("config") / "site.toml"
    config.write_text('hub = "org/bench-archive"\n[prices.brave]\nprice_per_1k = 3.0\n'
                      'price_source = "https://brave.example/pricing"\n'
                      'price_date = 2026-11-30\n')
    every = [*news, *finance, *scholar, *parts]
    assert main(["publish", *map(str, every), "--site", str(history)]) == 0
    out = history / "site"
    assert main(["dashboard", "--site", str(history), "--site-config", str(config),
                 "--out", str(out)]) == 0
    return {"out": out, "news": news, "finance": finance, "scholar": scholar, "parts": parts,
            "history": history}


class Tables(HTMLParser):
    """Cell texts of every exported table in a page, by table name."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "table" and "data-table" in attributes:
            self._table = attributes["data-table"]
            self.tables[self._table] = []
        elif self._table and tag == "tr":
            self.tables[self._table].append([])
        elif self._table and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def rows_by_first(table: list[list[str]]) -> dict[str, dict[str, str]]:
    head, *body = table
    return {row[0]: dict(zip(head, row, strict=True)) for row in body}


@pytest.fixture(scope="module")
def doms(built, tmp_path_factory) -> dict[str, str]:
    """Every cross-bench page and a few bench pages, loaded in Chromium."""
    chromium()  # skips, saying so, where Chromium is not installed
    out, tmp = built["out"], tmp_path_factory.mktemp("chromium")
    pages = {name: out / "search" / f"{name}.html" for name in PAGES}
    pages["news-latest"] = out / "search" / "news" / "latest.html"
    pages["scholar-trends"] = out / "search" / "scholar" / "trends.html"
    pages["finance-latest"] = out / "search" / "finance" / "latest.html"
    with ThreadPoolExecutor(2) as pool:
        loaded = pool.map(lambda item: run_chromium(
            item[1], tmp / item[0], "--dump-dom", "--virtual-time-budget=8000",
            f"--screenshot={tmp / item[0]}.png", "--window-size=1280,1400"), pages.items())
        result = dict(zip(pages, loaded, strict=True))
    for name in pages:
        assert (tmp / f"{name}.png").stat().st_size > 20_000, f"{name} rendered (nearly) blank"
    return result


def report(path: Path) -> dict:
    return json.loads(path.read_text())


def pooled(paths: list[Path], engine: str, key: str) -> float:
    values = [row[key] for path in paths
              for row in report(path)["engines"][engine]["per_query"] if row[key] is not None]
    return sum(values) / len(values)


def test_standings_hold_each_benchs_figures_and_ranks(built, doms):
    table = rows_by_first(Tables(doms["standings"]).tables["standings"])
    news_points = {e: pooled(built["news"], e, "ndcg") for e in NEWS}
    order = sorted(NEWS, key=lambda e: -news_points[e])
    for engine in NEWS:
        cell = table[engine]["news nDCG@5 [95 % CI]"]
        assert cell.startswith(f"{news_points[engine]:.3f} ["), (engine, cell)
        assert table[engine]["news rank"] == str(order.index(engine) + 1)
    # finance: recall pooled over the two runs (the day between is missing, not zero)
    hits = [row["score"] for p in built["finance"] for row in report(p)["engines"]["exa"][
        "per_query"]]
    assert table["exa"]["finance recall@5 [95 % CI]"].startswith(f"{sum(hits) / len(hits):.3f}")
    # legal: the two shard parts are one run over all six queries
    legal_hits = sum(1 for q in range(6) if q % 3)  # exa is engine 0: a hit when q % 3
    assert table["exa"]["legal recall@5 [95 % CI]"] == f"{legal_hits / 6:.3f} (no interval)"
    # scholar ran once: a figure without an interval, and engines it did not run say so
    assert table["exa"]["scholar recall@5 [95 % CI]"] == "0.500 (no interval)"
    assert table["exa-instant"]["scholar recall@5 [95 % CI]"] == "not run"
    svg = ET.fromstring((built["out"] / "search" / "news" / "leaderboard.svg").read_text())
    labels = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert [label for label in labels if label in NEWS] == order
    assert f"{news_points[order[0]]:.3f} [" in " ".join(filter(None, labels))


def test_tables_export_as_csv_and_markdown(built, doms):
    html_table = Tables(doms["standings"]).tables["standings"]
    search = built["out"] / "search"
    exported = list(csv.reader(io.StringIO((search / "standings.standings.csv").read_text())))
    assert exported == html_table
    markdown = (search / "standings.standings.md").read_text().splitlines()
    assert markdown[0] == "| " + " | ".join(html_table[0]) + " |" and len(markdown) == len(
        html_table) + 1
    for name in ("price.prices", "latency.latency", "independence.sharing",
                 "methodology.engines", "news/runs.runs"):
        assert (search / f"{name}.csv").is_file() and (search / f"{name}.md").is_file()


def test_prices_show_sources_and_unknown_is_never_zero(doms):
    prices = rows_by_first(Tables(doms["price"]).tables["prices"])
    assert prices["exa"]["USD per 1,000 queries"] == "5.00" and "exa.ai" in prices["exa"][
        "source"]
    assert prices["brave"]["USD per 1,000 queries"] == "3.00"  # the site config's override
    assert prices["brave"]["as of"] == "2026-11-30"
    assert prices["keenable"]["USD per 1,000 queries"] == "unknown"
    unknown = re.search(r"Not plotted \(price unknown\): ([^.<]+)\.", doms["price"]).group(1)
    assert sorted(unknown.split(", ")) == ["exa-instant", "keenable"]
    plotted = re.findall(r'class="textpoint"[^>]*><text[^>]*>([^<]+)<', doms["price"])
    assert "keenable" not in plotted and "exa" in plotted


def test_latency_is_the_mean_of_each_runs_p50_and_p95(built, doms):
    table = rows_by_first(Tables(doms["latency"]).tables["latency"])
    reports = [*built["news"], *built["finance"], *built["scholar"]]
    p50s = [report(p)["engines"]["exa"]["latency"]["p50"] for p in reports]
    merged = next(built["history"].glob("runs/legal/*.json"))
    p50s.append(json.loads(merged.read_text())["report"]["engines"]["exa"]["latency"]["p50"])
    assert table["exa"]["p50 s (all benches)"] == f"{sum(p50s) / len(p50s):.2f}"
    assert table["exa"]["runs timed"] == str(len(p50s))
    assert doms["latency"].count('class="trace scatter') >= 2 * len(NEWS)  # dumbbells, trend


def test_independence_defines_suspicious_sharing_and_counts_shared_urls(built, doms):
    assert "share at least 3 URLs" in doms["independence"]
    sharing = Tables(doms["independence"]).tables["sharing"]
    head, *body = sharing
    cells = {(r[0], r[1]): dict(zip(head, r, strict=True)) for r in body}
    both = 0  # news runs: one URL every engine returns per query; finance URLs never shared
    for path in built["news"]:
        for case_qid in {c["query_id"] for c in report(path)["cases"]}:
            answered = {c["engine"] for c in report(path)["cases"] if c["query_id"] == case_qid
                        and c["search_error"] is None}
            both += {"brave", "exa"} <= answered
    assert cells["brave", "exa"]["shared URLs"] == str(both)
    scholar = 4  # both answered every scholar query, sharing no URL
    assert cells["brave", "exa"]["queries both answered"] == str(both + scholar)
    assert 'class="trace scatter' in doms["independence"]  # the borrowing graph drew
    assert "relevant unique share" in doms["independence"]
    head, *body = Tables(doms["independence"]).tables["uniqueness"]
    assert body
    for row in body:
        cell = dict(zip(head, row, strict=True))
        # exclusive (returned by no other family) is a subset of unique (not as relevant)
        assert int(cell["relevant exclusive"]) <= int(cell["relevant unique"]) <= int(cell["of"])
        assert cell["of"] == cell["relevant"]  # every run published now records both counts


def test_methodology_is_generated_from_the_runs(doms):
    setup = rows_by_first(Tables(doms["methodology"]).tables["benches"])
    assert setup["news"]["judge model"] == "judge-model" and setup["news"]["top K"] == "5"
    assert setup["news"]["snippet cap (chars)"] == "2000"
    engines = rows_by_first(Tables(doms["methodology"]).tables["engines"])
    assert engines["exa"]["mode"] == "auto" and engines["exa-instant"]["mode"] == "instant"
    assert "one request at a time per engine" in doms["methodology"]
    assert "huggingface.co/datasets/org/bench-archive" in doms["methodology"]


def test_judgement_browser_pages_results_and_shows_gold_in_words(doms):
    latest = doms["news-latest"]
    assert "1–6 of 6 queries" in latest and latest.count('class="query"') == 6
    assert "rated 4" in latest and "4 FullyM" in latest and "freshness_gate pass" in latest
    finance = doms["finance-latest"]
    assert "gold: ceo: gold f0" in finance
    assert "{&#x27;field" not in finance and "{&#39;field" not in finance  # no dict repr
    assert "no cue word" in finance and ">miss<" in finance
    across = doms["judgements"]  # the newest run of each bench: 6 + 6 + 4 + 6 queries
    assert "1–22 of 22 queries" in across and across.count('class="query"') == 22


def test_browser_opens_filtered_from_the_link(built, tmp_path):
    chromium()
    run = built["out"] / "search" / "news" / "runs" / "20260702T001700Z.html"
    dom = run_chromium(run, tmp_path / "p", "--dump-dom", "--virtual-time-budget=8000",
                       fragment="engine=brave&rating=error")
    assert "1–1 of 1 queries" in dom and "search error: HTTP 503" in dom


def test_a_single_run_chart_has_a_readable_time_axis(doms):
    ticks = re.findall(r'class="xtick"[^>]*><text[^>]*>([^<]+)<', doms["scholar-trends"])
    assert ticks and not [t for t in ticks if re.search(r"\d\.\d{3}", t)], ticks


def test_every_run_has_a_permalink(built):
    search = built["out"] / "search"
    for path in [*built["news"], *built["finance"], *built["scholar"]]:
        started = report(path)["header"]["started_at"]
        run_id = started[:19].replace("-", "").replace(":", "") + "Z"
        page = search / report(path)["header"]["bench"] / "runs" / f"{run_id}.html"
        assert page.is_file(), page
        assert "huggingface.co/datasets/org/bench-archive/tree/main/runs/" in page.read_text()
    listing = (search / "news" / "runs.html").read_text()
    assert listing.count('href="runs/') == 6


def test_a_20000_case_run_stays_paged(tmp_path):
    """2,000 queries × 10 engines, in the per-query shape a known-item report holds, written
    by the site's own run-data writer and opened in the real browser page."""
    chromium()
    engines = [f"engine-{i}" for i in range(10)]
    queries = 2000
    per_query = {e: [{"query_id": f"q{q}", "query": f"question {q}", "gold_text": f"gold {q}",
                      "hit_rank": 1 if (q + i) % 2 else None, "search_error": None,
                      "results": [{"url": f"https://{e}.example/{q}/{r}", "title": f"t{r}",
                                   "snippet": "s", "det_match": r == 0 and (q + i) % 2,
                                   "match_why": "m", "judge_match": None} for r in range(3)]}
                     for q in range(queries)] for i, e in enumerate(engines)}
    entry = RunEntry(bench="finance", run_id="R1", ts="2026-07-01T00:17:00Z", complete=True,
                     source="finance__f-20260701-001700.json",
                     report={"kind": "known_item", "header": {"num_results": 3},
                             "engines": {e: {"per_query": rows}
                                         for e, rows in per_query.items()}})
    search = tmp_path / "site" / "search"
    write_browser_script(search)
    assert write_run_data(search / "finance" / "runs" / "R1", entry) == queries
    chunks = sorted((search / "finance" / "runs" / "R1").glob("chunk-*.js"))
    assert len(chunks) == queries // 100
    page = site.write_page(tmp_path / "site", "search/finance/big.html", "big run",
                           browser_html("../", [("finance/R1", "runs/R1/")]))
    dom = run_chromium(page, tmp_path / "p", "--dump-dom", "--virtual-time-budget=8000",
                       fragment="q=question 19")
    # "question 19", "question 190"…"question 199", "question 1900"…: 111 matches, 25 shown
    assert "1–25 of 111 queries" in dom
    assert dom.count('class="query"') == 25 and dom.count('class="result"') == 25 * 10 * 3
