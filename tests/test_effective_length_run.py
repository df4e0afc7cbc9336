"""Effective length end to end: a model whose recall fades with context (the fake server's
``fading`` behaviour: passes ~100/50/0 % on novel_16k/64k/128k) is reported at 16K by
the run's terminal summary, ``needle status`` and the recall dashboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from evalrun import record_run

from needle_lib.cli import main
from needle_lib.dashboard.build import build_dashboard

FAMILY = ["novel_16k", "novel_64k", "novel_128k"]
HEADLINE = "fader · novel_16k/64k/128k: effective length 16K [95 % CI 16K]"


@pytest.fixture(scope="module")
def fading_run(tmp_path_factory) -> tuple[Path, str]:
    results = tmp_path_factory.mktemp("results")
    printed = record_run(results, "fading", "fader", FAMILY)
    return results, printed


def test_the_terminal_summary_reports_16k(fading_run):
    _, printed = fading_run
    assert "effective context length (NoLiMa's rule: the longest size whose pass rate stays "\
           "≥ 85 % of the shortest size's):" in printed
    assert HEADLINE in printed
    rates = re.search(r"pass rate \[95 % CI\]: novel_16k (\S+) % .* novel_64k (\S+) % .* "
                      r"novel_128k (\S+) %", printed)
    assert rates, printed
    assert float(rates[1]) == 100.0 and 30 <= float(rates[2]) <= 70 and float(rates[3]) == 0.0


def test_status_reports_it(fading_run, capsys):
    results, _ = fading_run
    assert main(["status", "--model", "fader", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^novel_64k__fader +complete", out, re.M)
    assert HEADLINE in out and "threshold 85.0 %" in out


def test_the_dashboard_shows_a_line_per_model(fading_run, tmp_path):
    results, _ = fading_run
    build_dashboard(results, tmp_path)
    for page in ("novel_16k/leaderboard.html", "novel_128k/leaderboard.html",
                 "long-context/default.html"):
        html = (tmp_path / page).read_text(encoding="utf-8")
        assert html.count('class="effective-length"') == 1, page
        assert "<b>" + HEADLINE + "</b>" in html, page
        assert "NoLiMa&#39;s rule" in html, page  # escaped by the template
