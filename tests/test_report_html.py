"""The per-run pytest-html report, checked as a browser renders it."""

from __future__ import annotations

import json
import re

from browser import dom_text, first_screen
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
    assert "exa, brave on 2 news queries" in shown and table, shown[:2000]
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


def _counts(text: str) -> dict[str, int]:
    """``{outcome: n}`` from the summary's "2 passed · 8 failed · 0 errors · 0 skipped"."""
    return {outcome: int(n) for n, outcome in
            re.findall(r"(\d+) (passed|failed|errors|skipped)", text)}


def test_the_first_screen_of_a_recall_report_names_the_run_and_its_failed_cases(
        pytester, tmp_path):
    """Opened in a 1280 × 900 window, the summary block is in view, names the model and
    the corpus, and its counts are the run's; the environment is the evaluation's."""
    page = tmp_path / "report.html"
    with FakeOpenAIServer("mixed") as server:
        result = run_evals(pytester, tmp_path / "results", "--corpus", "http_server",
                           "--sample", "6", "--model", "fake-mixed", "--base-url", server.url,
                           "--html", str(page))
    ran = result.parseoutcomes()
    assert ran.get("failed"), result.stdout.str()  # the mixed model misses some cases
    (dump,) = (tmp_path / "results" / "runs").rglob("*.json")
    summary = json.loads(dump.read_text())["summary"]

    block = first_screen(page, "needle-evaluation", tmp_path)
    assert block.get("visible"), block
    assert block["top"] >= 0 and block["bottom"] <= block["viewport"], block  # above the fold
    text = block["text"]
    assert "fake-mixed on http_server" in text
    assert _counts(text.splitlines()[0]) == {
        "passed": ran.get("passed", 0), "failed": ran["failed"], "errors": 0, "skipped": 0}
    assert summary["passed"] == ran.get("passed", 0) and summary["failed"] == ran["failed"]
    failed = re.findall(r"^FAILED (test_recall\[.*)$", text, re.M)
    assert len(failed) == ran["failed"], text  # each failed case, with why
    assert re.search(r"FAILED test_recall\[http_server-\w+-fake-mixed\]: matched \d+/\d+ "
                     r"lines", text), text
    assert "hallucinated" in text and "not scored" in text  # the diff legend

    shown = re.sub(r'data-jsonblob="[^"]*"', "", dom_text(page, tmp_path))
    title = re.search(r'<h1 id="title">([^<]*)</h1>', shown)
    assert title and title[1].startswith("Needle · http_server × fake-mixed · "), title
    environment = re.search(r'<table id="environment">(.*?)</table>', shown, re.S)
    assert environment, shown[:2000]
    keys = re.findall(r"<tr>\s*<td>([^<]*)</td>", environment[1])
    assert keys[:4] == ["Model", "Corpus", "Needle", "Commit"], keys
    assert f"model fake-mixed at {server.url}" in environment[1]
    assert "CPython standard library" in environment[1]  # the corpus's provenance
    assert "pluggy" not in environment[1] and "Plugins" not in keys


def test_the_first_screen_of_a_search_report_shows_engines_judge_and_skips(
        pytester, tmp_path, monkeypatch):
    page = tmp_path / "report.html"
    queries = tmp_path / "queries.txt"
    queries.write_text("best hiking boots\nmars rover landing\n")
    with FakeSearchServer() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        result = run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                           "--engines", "exa,brave,tavily", "--skip-missing-keys",
                           "--html", str(page), module="")
    ran = result.parseoutcomes()
    assert ran["skipped"] == 2, result.stdout.str()  # tavily: no key here

    block = first_screen(page, "needle-evaluation", tmp_path)
    assert block.get("visible") and block["bottom"] <= block["viewport"], block
    text = block["text"]
    assert "exa, brave, tavily (basic) on 2 news queries, judged by " in text
    assert _counts(text.splitlines()[0]) == {
        "passed": ran.get("passed", 0), "failed": ran.get("failed", 0), "errors": 0,
        "skipped": 2}
    assert "SKIPPED 2 case(s): tavily: set TAVILY_API_KEY" in text
    assert "3 HM highly meets" in text  # the rating legend

    shown = re.sub(r'data-jsonblob="[^"]*"', "", dom_text(page, tmp_path))
    assert "Skipped: tavily: set TAVILY_API_KEY" in shown  # the row's log, not a tuple
    assert "('/" not in shown and "None" not in shown
    environment = re.search(r'<table id="environment">(.*?)</table>', shown, re.S)
    assert environment and "Judge" in environment[1] and "needs-met" in environment[1]
    # set again from what ran: -k news ran no recall case, so no model or corpus is listed
    keys = re.findall(r"<tr>\s*<td>([^<]*)</td>", environment[1])
    # then pytest-metadata's CI variables where the run has them (CI=true in .ci/run)
    assert keys[:5] == ["Engines", "Queries", "Judge", "Needle", "Commit"], keys
    assert not {"Model", "Corpus", "Plugins", "Packages"} & set(keys), keys
