"""The per-run pytest-html report, checked as a browser renders it."""

from __future__ import annotations

import json
import re

from browser import dom_text
from evalrun import run_evals

from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.testing.search_server import FakeSearchServer


def test_a_failed_case_shows_its_diff_once_coloured_with_composition_and_legend(
        pytester, tmp_path):
    page = tmp_path / "report.html"
    with FakeOpenAIServer("wrong") as server:
        result = run_evals(pytester, tmp_path, "-k", "http_server", "--corpus", "http_server",
                           "--sample", "1", "--model", "m", "--base-url", server.url,
                           "--html", str(page))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*+ x7 = 7*"])  # the terminal keeps the plain diff
    dom = dom_text(page, tmp_path)
    shown = re.sub(r'data-jsonblob="[^"]*"', "", dom)  # the page's data, not what it shows
    assert "test_recall[http_server-" in shown
    assert "col-score" not in shown  # the score column is a search run's
    assert shown.count("x7 = 7") == 1
    assert shown.count("composition: code 0/") == 1
    assert shown.count("legend:") == 1 and "not scored" in shown
    assert re.search(r'class="needle-hallucinated" style="[^"]*color:#b58900[^"]*">\+ x7 = 7',
                     shown)


def test_a_search_report_has_the_summary_table_and_ids_that_read_like_the_query(
        pytester, tmp_path, monkeypatch):
    page = tmp_path / "report.html"
    queries = tmp_path / "queries.txt"
    queries.write_text("best hiking boots\nmars rover landing\n")
    with FakeSearchServer() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                  "--engines", "exa,brave", "--html", str(page), module="")
    dom = dom_text(page, tmp_path)
    shown = re.sub(r'data-jsonblob="[^"]*"', "", dom)
    table = re.search(r'<table class="needle-search-summary".*?</table>', shown, re.S)
    assert "Needle news summary" in shown and table, shown[:2000]
    cells = re.findall(r"<t[hd]>([^<]*)</t[hd]>", table[0])
    assert cells[:2] == ["engine", "nDCG@5"]
    for engine in ("exa", "brave", "ultimate"):
        assert engine in cells
    assert re.search(r"test_news\[news-best-hiking-boots-[0-9a-f]{4}-exa\]", shown)


def test_a_search_page_is_compact_and_links_each_case_to_its_detail(
        pytester, tmp_path, monkeypatch):
    """Each search case is one compact row (outcome, id, score, a link); its results and
    verdicts are on the detail page beside it, under the anchor the row links to."""
    page = tmp_path / "report.html"
    queries = tmp_path / "queries.txt"
    queries.write_text("benchmark query number 8\nbenchmark query number 9\n")
    with FakeSearchServer() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        run_evals(pytester, tmp_path / "results", "-k", "news", "--queries", str(queries),
                  "--engines", "exa,brave", "--html", str(page), module="")
    (run,) = (tmp_path / "results" / "search").glob("news__*.json")
    cases = json.loads(run.read_text())["cases"]
    assert {case["outcome"] for case in cases} == {"passed", "failed"}  # both kinds of row
    assert "judge reasoning" not in page.read_text()  # no results table rides in the page

    shown = re.sub(r'data-jsonblob="[^"]*"', "", dom_text(page, tmp_path))
    rows = re.findall(
        r'<td class="col-result[^"]*">(\w+)</td><td class="col-testId">([^<]*)</td>'
        r'<td class="col-score">([^<]*)</td><td class="col-duration">[^<]*</td>'
        r'<td class="col-links"><a [^>]*href="report\.cases\.html#(case-\d+)"[^>]*>detail</a>',
        shown)
    assert len(rows) == len(cases) == 4, shown[:3000]
    detail = dom_text(page.with_name("report.cases.html"), tmp_path)
    sections = dict(re.findall(r'<section id="(case-\d+)">(.*?)</section>', detail, re.S))
    for case in cases:
        ratings = [result["rating"] for result in case["results"]]
        (outcome, anchor), = [(outcome, anchor) for outcome, test_id, score, anchor in rows
                              if test_id.endswith(f"-{case['engine']}]")
                              and f"{case['query'].replace(' ', '-')}-" in test_id
                              and score == f"best {max(ratings)} · "
                                           + " ".join(map(str, ratings))]
        assert outcome.lower() == case["outcome"]
        section = sections[anchor]
        assert case["engine"] in section and case["outcome"] in section
        assert "judge reasoning" in section
        for result in case["results"]:
            assert f'href="{result["url"]}"' in section
            assert f"<td>{result['rating']} {result['label']}</td>" in section
