"""The per-run pytest-html report, checked as a browser renders it."""

from __future__ import annotations

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
