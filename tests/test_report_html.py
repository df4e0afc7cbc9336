"""The per-run pytest-html report, checked as a browser renders it."""

from __future__ import annotations

import re

from browser import dom_text
from evalrun import run_evals

from needle_lib.testing.openai_server import FakeOpenAIServer


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
