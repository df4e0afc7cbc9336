"""Stored XSS, checked where it would run: headless Chromium on the pytest-html report, the
recall dashboard and every page of the published search site (issue 20, items 1–3).

Payloads ride in every untrusted field: a query id and query text (a ``--queries`` file),
a result's title, snippet and URL (an engine), a model config's file name and label. Each
payload, if it ever runs, marks the page (``<body data-pwned>``); the DOM Chromium leaves
after running the page's scripts is then inspected for that mark, for live ``javascript:``
/ ``data:`` links, and for links Plotly drew inside a chart.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import chromium, run_chromium
from evalrun import run_evals

from needle_lib.cli import main
from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.testing.search_server import FakeSearchServer

MARK = "document.body.dataset.pwned=1"
IMG = f"<img src=x onerror={MARK}>"
SCRIPTED_QUERY = f"best hiking boots {IMG}"
#: Plotly's own markup: a label like this became a live link inside charts.
PLOTLY_LINK = '<a href="https://evil.example/">label link</a>'
HOSTILE_RESULTS = [
    {"url": f"javascript:{MARK}", "title": f"js link {IMG}", "snippet": f"snippet {IMG}"},
    {"url": f"data:text/html,<script>{MARK}</script>", "title": "data link", "snippet": "s"},
    {"url": "https://ok.example/boots", "title": f"fine {IMG}", "snippet": "boots"},
]


class _Dom(HTMLParser):
    """What a payload would leave behind in a rendered DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.pwned = False
        self.bad_links: list[str] = []
        self.chart_links = 0
        self.handlers: list[str] = []
        self._svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "body" and "data-pwned" in values:
            self.pwned = True
        if tag == "svg":
            self._svg += 1
        if tag == "a":
            href = (values.get("href") or values.get("xlink:href") or "").strip().lower()
            if href.startswith(("javascript:", "data:", "vbscript:")):
                self.bad_links.append(href)
            if self._svg:
                self.chart_links += 1
        self.handlers += [f"{tag} {name}" for name, value in attrs
                          if name.startswith("on") and "pwned" in (value or "")]

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg = max(0, self._svg - 1)


def _render_all(pages: list[Path], tmp_path: Path) -> dict[Path, str]:
    chromium()  # skips, saying so, where Chromium is not installed
    with ThreadPoolExecutor(2) as pool:  # one profile per page, so browsers run in parallel
        doms = pool.map(lambda item: run_chromium(
            item[1], tmp_path / f"profile-{item[0]}", "--dump-dom",
            "--virtual-time-budget=5000"), enumerate(pages))
        return dict(zip(pages, doms, strict=True))


def _assert_inert(doms: dict[Path, str]) -> None:
    for page, dom in doms.items():
        assert dom, f"chromium returned no DOM for {page}"
        seen = _Dom()
        seen.feed(dom)
        assert not seen.pwned, f"a payload ran in {page}"
        assert not seen.bad_links, f"live script links in {page}: {seen.bad_links}"
        assert not seen.handlers, f"payload event handlers in {page}: {seen.handlers}"
        assert seen.chart_links == 0, f"Plotly drew a link from a label in {page}"


@pytest.fixture
def search_site(pytester, tmp_path, monkeypatch):
    """A real news run over hostile queries and results, then `needle publish` and
    `needle dashboard --site`: (pytest-html report, site directory)."""
    queries = tmp_path / "hostile.jsonl"
    queries.write_text(json.dumps({"query_id": f"id-{IMG}", "query": SCRIPTED_QUERY}) + "\n",
                       encoding="utf-8")
    report = tmp_path / "report.html"
    with FakeSearchServer(scripted={("exa", SCRIPTED_QUERY): HOSTILE_RESULTS}) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        result = run_evals(pytester, tmp_path / "results", "--queries", str(queries),
                           "--engines", "exa", "--html", str(report), module="test_news.py")
    assert result.ret in (0, 1), result.stdout.str()
    (search_report,) = (tmp_path / "results" / "search").glob("news__*.json")
    site = tmp_path / "site"
    assert main(["publish", str(search_report), "--site", str(site)]) == 0
    assert main(["dashboard", "--site", str(site)]) == 0
    return report, site


def test_search_report_and_every_site_page_keep_payloads_inert(search_site, tmp_path):
    report, site = search_site
    html = report.read_text(encoding="utf-8")
    assert "best-hiking-boots-img-src-x" in html  # the readable, safe test id
    detail = report.with_name("report.cases.html")  # each case's results, linked per row
    pages = [report, detail, *sorted((site / "dashboard").rglob("*.html"))]
    assert len(pages) > 4
    doms = _render_all(pages, tmp_path)
    _assert_inert(doms)
    latest = [dom for page, dom in doms.items() if "latest" in page.name]
    shown = "".join(latest) + doms[detail]
    assert "https://ok.example/boots" in shown  # an http(s) result is still a link
    assert "javascript:" in shown  # …and a script URL is still shown, as text


def test_recall_report_and_dashboards_keep_a_hostile_model_inert(pytester, tmp_path):
    model = tmp_path / f"{IMG}.toml"  # a config's file name is part of the test id
    label = f"{PLOTLY_LINK} {IMG}"
    model.write_text(f"name = \"m\"\nlabel = {json.dumps(label)}\n", encoding="utf-8")
    report = tmp_path / "report.html"
    results = tmp_path / "results"
    with FakeOpenAIServer("wrong") as server:  # failed cases: listed in the summary block
        outcome = run_evals(pytester, results, "-k", "http_server", "--corpus", "http_server",
                            "--sample", "2", "--model", str(model), "--base-url", server.url,
                            "--html", str(report))
    outcome.assert_outcomes(failed=2)
    out = tmp_path / "dashboard"
    assert main(["dashboard", "--results", str(results), "--out", str(out)]) == 0
    pages = [report, *sorted(out.rglob("*.html"))]
    doms = _render_all(pages, tmp_path)
    _assert_inert(doms)
    summary = doms[report].split('id="needle-evaluation"')[1].split("</div>")[0]
    assert summary.count("FAILED") == 2 and "pwned" in summary  # the failed cases, listed
    environment = doms[report].split('id="environment"')[1].split("</table>")[0]
    assert "pwned" in environment  # the model, named
    charts = [dom for page, dom in doms.items() if 'class="main-svg"' in dom]
    assert charts, "no chart was drawn"
    assert any("label link" in dom for dom in charts)  # the label is shown, as text
