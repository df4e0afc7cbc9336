"""The search site's cross-bench page text (``dashboard/overview.py``), rendered through
``templates/dashboard/overview.html.j2`` and ``browser.html.j2``: the branches the built
site of ``test_search_site`` does not reach, and escaping of what the pages interpolate."""

from __future__ import annotations

import html
import re

from needle_lib.continuous.store import MISSING_REPORT, Site
from needle_lib.contract.history import JudgedRow
from needle_lib.dashboard import overview
from needle_lib.dashboard.exports import PageTables
from needle_lib.dashboard.judgements import browser_html
from needle_lib.dashboard.overview_views import RunLine
from needle_lib.dashboard.search_views import BenchView
from needle_lib.dashboard.site_config import SiteConfig

RUN = RunLine(bench="news", run_id="20260701T001700Z", ts="2026-07-01T00:17:00Z", complete=False)


def context(hub: str | None = None) -> overview.Context:
    return overview.overview_context(Site(), [], SiteConfig(hub=hub))


def news_view() -> BenchView:
    row = JudgedRow(run_id=RUN.run_id, ts=RUN.ts, bench="news", engine="exa", complete=False,
                    k=5, num_queries=3, num_scored=2, search_errors=1, judge_errors=0,
                    ndcg=0.5)
    return BenchView(bench="news", kind="judged", k=5, rows=[row], window=[row])


def text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_a_history_without_kept_reports_says_so_on_the_judgements_page():
    page = overview._judgements(context(), PageTables("judgements.html"))
    assert page == "<p>No run reports are kept in this history.</p>"


def test_a_run_page_says_why_its_judgements_are_not_shown():
    view = news_view()
    gone, _ = overview._run_page(context(), view, RUN, view.rows, kept=False)
    missing, _ = overview._run_page(context(), view, RUN, view.rows, kept=False, missing=True)
    kept, _ = overview._run_page(context(), view, RUN, view.rows, kept=True)
    assert "no longer kept in the history" in text(gone)
    assert "needleBrowser" not in gone and "needleBrowser" not in missing
    assert f"This run's judgements cannot be shown: {MISSING_REPORT}." in text(missing)
    assert "<h2>Judgements</h2>" in kept and "needleBrowser" in kept
    meta = text(kept.split("</p>")[0])
    assert meta == ("news run 20260701T001700Z started 2026-07-01T00:17:00Z UTC · incomplete"
                    " · permalink: search/news/runs/20260701T001700Z.html")
    assert "Archived artifacts" not in kept


def test_a_run_page_links_its_archive_when_the_site_names_one():
    view = news_view()
    page, _ = overview._run_page(context("org/arch&ive"), view, RUN, view.rows, kept=False)
    folder = f"runs/news/{RUN.run_id}"
    assert (f'<a href="https://huggingface.co/datasets/org/arch&amp;ive/tree/main/{folder}">'
            f"{folder}/ on the hub</a>") in page


def test_the_browser_mount_escapes_its_folders_and_keeps_its_json_inside_the_script():
    hostile = 'R1/"><script>alert(1)</script>'
    mount = browser_html("../", [("news/R1", hostile)])
    assert "<script>alert(1)" not in mount
    assert 'src="R1/&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;index.js"' in mount
    call = re.search(r"needleBrowser\(document.getElementById\(\"judgements\"\), (.*)\);",
                     mount).group(1)
    assert "<" not in call and '"news/R1":"R1/\\">\\u003cscript>' in call
    assert mount.startswith('<div id="judgements" class="browser">')
    assert '<script src="../browser.js"></script>' in mount
