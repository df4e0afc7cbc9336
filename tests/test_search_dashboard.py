"""Search dashboards from a synthetic history: three runs of a judged bench (news) and of a
known-item bench (finance) over three days, published with `needle publish` and rendered
with `needle dashboard --site`; pages checked as files and in headless Chromium."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from browser import chromium, run_chromium
from search_runs import START, finance_run, news_run

from needle_lib.cli import main

INTERVAL = re.compile(r'class="num interval">(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]')
NEWS_ENGINES = ("exa", "exa-instant", "brave")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> list[Path]:
    directory = tmp_path_factory.mktemp("reports")
    paths = []
    for day in range(3):
        started = START + timedelta(days=day)
        paths.append(news_run(directory, started, seed=day,
                              failing="brave" if day == 1 else None))
        paths.append(finance_run(directory, started, seed=day))
    return paths


@pytest.fixture(scope="module")
def dashboard(reports, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    assert main(["publish", *map(str, reports), "--site", str(site)]) == 0
    assert main(["dashboard", "--site", str(site)]) == 0
    return site / "dashboard"


def page(dashboard: Path, relative: str) -> str:
    return (dashboard / relative).read_text(encoding="utf-8")


def test_publish_then_dashboard_writes_every_page(dashboard):
    for bench in ("news", "finance"):
        for name in ("leaderboard", "trends", "overlap", "uniqueness", "latest"):
            assert (dashboard / "search" / bench / f"{name}.html").is_file(), (bench, name)
    assert (dashboard / "search" / "finance" / "breakdowns.html").is_file()
    assert not (dashboard / "search" / "news" / "breakdowns.html").exists()
    index = page(dashboard, "index.html")
    assert "Search benchmarks" in index and 'href="search/finance/breakdowns.html"' in index
    assert (dashboard / "plotly.min.js").is_file()  # offline: bundled once


def test_leaderboard_shows_each_engine_with_its_interval(dashboard):
    html = page(dashboard, "search/news/leaderboard.html")
    found = INTERVAL.findall(html)
    assert len(found) == len(NEWS_ENGINES) + 1  # and ultimate
    for point, low, high in found:
        assert float(low) <= float(point) <= float(high)
    assert "3 run(s) in the last 7 days" in html
    finance = page(dashboard, "search/finance/leaderboard.html")
    assert "recall@5 [95 % CI]" in finance and "MRR@5 [95 % CI]" in finance
    assert len(INTERVAL.findall(finance)) == 2 + 1 + 2  # recall (with ultimate), MRR


def test_errors_and_missing_runs_are_visible(dashboard):
    news = page(dashboard, "search/news/leaderboard.html")
    assert re.search(r'<tr class="errors"><td class="num">\d</td><td>brave</td>', news)
    assert re.search(r'\d+ missing run\(s\) in the window \(news runs every hour', news)
    assert "2026-07-01 01:00 – 2026-07-01 23:00" in news  # a day of missing hours, one span
    finance = page(dashboard, "search/finance/leaderboard.html")
    assert "No missing runs in the window." in finance  # daily, and it ran daily
    index = page(dashboard, "index.html")
    news_row = re.search(r"<tr[^>]*><td>news</td>.*?</tr>", index).group(0)
    assert 'class="errors"' in news_row and 'class="num flag">1<' in news_row


def test_latest_run_page_links_its_permalink_and_loads_the_browser(dashboard):
    news = page(dashboard, "search/news/latest.html")
    assert "Run 20260703T001700Z" in news and 'href="runs/20260703T001700Z.html"' in news
    data = dashboard / "search" / "news" / "runs" / "20260703T001700Z"
    assert "news story 2 number 0" in (data / "index.js").read_text()
    assert "rated 4" in (data / "chunk-0.js").read_text()


def test_a_single_report_charts_without_history(reports, tmp_path, capsys):
    out = tmp_path / "single"
    assert main(["dashboard", "--report", str(reports[0]), "--out", str(out)]) == 0
    assert "1 search bench(es)" in capsys.readouterr().out
    html = (out / "search" / "news" / "leaderboard.html").read_text()
    assert "no interval: not enough runs (1 in the window" in html
    assert not INTERVAL.search(html)


def test_default_dashboard_reads_results_search(reports, tmp_path, capsys):
    results = tmp_path / "results"
    (results / "search").mkdir(parents=True)
    for path in reports[:2]:
        (results / "search" / path.name).write_bytes(path.read_bytes())
    (results / "search" / "news__x__20260101-000000.json").write_text("{broken")
    assert main(["dashboard", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "note: search report left out:" in out and "2 search bench(es)" in out
    index = (results / "dashboard" / "index.html").read_text()
    assert "No chartable runs found." in index and "Search benchmarks" in index


def test_pages_render_in_chromium(dashboard, tmp_path):
    chromium()  # skips, saying so, where Chromium is not installed
    pages = {name: dashboard / "search" / bench / f"{kind}.html" for name, bench, kind in (
        ("news-trends", "news", "trends"), ("news-leaderboard", "news", "leaderboard"),
        ("finance-trends", "finance", "trends"), ("finance-breakdowns", "finance",
                                                   "breakdowns"))}
    with ThreadPoolExecutor(2) as pool:  # one profile per page, so browsers run in parallel
        doms = dict(zip(pages, pool.map(lambda item: run_chromium(
            item[1], tmp_path / item[0], f"--screenshot={tmp_path / item[0]}.png",
            "--dump-dom", "--virtual-time-budget=5000", "--window-size=1280,1000"),
            pages.items()), strict=True))
    for name in pages:
        png = tmp_path / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size > 20_000, f"{name} rendered (nearly) blank"
        assert 'class="main-svg"' in doms[name], name  # Plotly drew from the bundled script
    # a trend has one line per engine (nDCG: the pool is 1 by definition, not drawn)
    assert doms["news-trends"].count('class="trace scatter') == len(NEWS_ENGINES)
    legend = re.findall(r'class="legendtext"[^>]*>([^<]+)<', doms["news-trends"])
    assert sorted(legend) == sorted(NEWS_ENGINES)
    # finance: recall (exa, keenable, ultimate as the ceiling) and MRR (exa, keenable)
    assert doms["finance-trends"].count('class="trace scatter') == 3 + 2
    # the leaderboard draws an error bar on each engine's bar
    assert doms["news-leaderboard"].count('class="errorbar"') == len(NEWS_ENGINES) + 1
    assert len(INTERVAL.findall(doms["news-leaderboard"])) == len(NEWS_ENGINES) + 1
    assert doms["finance-breakdowns"].count("main-svg") >= 2 * 4  # bucket, field, … charts
