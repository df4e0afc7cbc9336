"""An engine's env-tuned mode in a real run (``TAVILY_DEPTH``, against the loopback fake's
Tavily): a bad mode is one usage error before any request; the mode a run used is in its
header and wherever its engines are listed; ``--resume`` refuses a run of another mode,
naming it, and continues one of the same."""

from __future__ import annotations

import re
from html import unescape

import pytest
from evalrun import assert_usage_error, run_evals
from test_search_pipeline import serve
from test_search_resume import assert_refused, news_queries, the_report


def _tavily(monkeypatch: pytest.MonkeyPatch, server, depth: str | None) -> None:
    for key, value in server.tavily_env().items():
        monkeypatch.setenv(key, value)
    if depth is None:
        monkeypatch.delenv("TAVILY_DEPTH", raising=False)
    else:
        monkeypatch.setenv("TAVILY_DEPTH", depth)


def test_a_bad_mode_is_one_usage_error_before_any_request(pytester, tmp_path, monkeypatch):
    queries = news_queries(tmp_path, 2)
    with serve(monkeypatch, tmp_path, "bad") as server:
        _tavily(monkeypatch, server, "deep")
        result = run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                           "--engines", "exa,tavily", module="")
    assert_usage_error(result, "engine tavily: TAVILY_DEPTH must be one of basic, advanced, "
                               "fast, ultra-fast; got 'deep'")
    assert sum(server.requests.values()) == 0
    assert not (tmp_path / "search").exists() or not any((tmp_path / "search").iterdir())


def test_a_runs_mode_is_recorded_shown_and_resumed_only_by_the_same_mode(pytester, tmp_path,
                                                                        monkeypatch):
    queries = news_queries(tmp_path, 2)
    page = tmp_path / "page.html"
    args = ("-k", "news", "--queries", str(queries), "--engines", "exa,tavily")
    with serve(monkeypatch, tmp_path, "first") as server:
        _tavily(monkeypatch, server, "advanced")
        result = run_evals(pytester, tmp_path, *args, "--html", str(page), module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    assert server.tavily_depths == ["advanced", "advanced"]  # what the engine was asked
    path, report = the_report(tmp_path, "news")
    assert report["header"]["engine_modes"] == {"tavily": "advanced"}
    assert report["engines"]["tavily"]["num_scored"] == 2
    # the terminal's engine table and the HTML report's environment and summary
    result.stdout.re_match_lines([r"^tavily \(advanced\) +\d\.\d{3} +2 "])
    html = page.read_text(encoding="utf-8")
    blob = re.search(r'data-jsonblob="([^"]*)"', html)  # pytest-html's data: the environment
    assert blob and '"Engines": "exa, tavily (advanced)"' in unescape(blob[1])
    assert "<h3>exa, tavily (advanced) on 2 news queries" in html  # the summary block
    assert "<td>tavily (advanced)</td>" in html  # and its engine table

    with serve(monkeypatch, tmp_path, "again") as server:
        _tavily(monkeypatch, server, None)  # the default, basic
        refused = run_evals(pytester, tmp_path, *args, "--resume", module="")
        assert_refused(refused, f"--resume: {path} was produced by a different setup; "
                                "refusing to mix:",
                       "  engine_modes.tavily: 'advanced' (earlier run) vs 'basic' (this run)")
        assert sum(server.requests.values()) == 0
        _tavily(monkeypatch, server, "advanced")
        resumed = run_evals(pytester, tmp_path, *args, "--resume", module="")
        assert resumed.ret == result.ret, resumed.stdout.str()
        assert sum(server.requests.values()) == 0  # every case kept from the same setup
