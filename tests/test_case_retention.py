"""A long run keeps no case record once the case is settled, and pytest's failure summary
does not scan every passing setup/teardown report per failure (quadratic at 20,000 cases);
the summaries and reports stay what they were."""

from __future__ import annotations

import json

import pytest
from evalrun import run_evals
from test_search_pipeline import report_of, serve

PROBE = """
import json
from pathlib import Path

from pytest_html.basereport import BaseReport

def pytest_sessionfinish(session):
    Path("items.json").write_text(json.dumps(
        [name for item in session.items for name, _ in item.user_properties]))

def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    html = [plugin for plugin in terminalreporter.config.pluginmanager.get_plugins()
            if isinstance(plugin, BaseReport)]
    settled = [r for key in ("passed", "failed") for r in stats.get(key, [])]
    Path("probe.json").write_text(json.dumps({
        "settled": len(settled),
        "failed": len(stats.get("failed", [])),
        "quiet": len(stats.get("", [])),
        "html_pages": len(html),
        "html_kept": sum(len(plugin._reports) for plugin in html),
        "carrying": sum(any(n == "needle_record" for n, _ in r.user_properties)
                        for r in settled)}))
"""


@pytest.mark.parametrize("extra", [(), ("-n", "2")], ids=["one process", "workers"])
def test_a_settled_case_leaves_no_record_behind(pytester, tmp_path, monkeypatch, extra):
    pytester.makepyfile(needle_probe=PROBE)
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"story number {i}\n" for i in range(6)))
    with serve(monkeypatch, tmp_path, "run"):
        result = run_evals(
            pytester,
            tmp_path / "results",
            "-k",
            "news",
            "--queries",
            str(queries),
            "--engines",
            "exa,brave",
            "-p",
            "needle_probe",
            *extra,
            module="",
        )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    probe = json.loads((pytester.path / "probe.json").read_text())
    assert probe["settled"] == 12 and probe["carrying"] == 0
    assert probe["quiet"] == 0  # no passing setup/teardown report of a case is listed
    assert probe["html_pages"] == 1 and probe["html_kept"] == 0  # rowed, then let go
    if not extra:  # the controller's items are the ones that ran
        assert "needle_record" not in json.loads((pytester.path / "items.json").read_text())
    # the report still has every case, and a failed case is still summarised
    report = report_of(tmp_path / "results", "news")
    assert len(report["cases"]) == 12
    failed = [c for c in report["cases"] if c["outcome"] == "failed"]
    assert probe["failed"] == len(failed) > 0
    result.stdout.fnmatch_lines(["*= FAILURES =*", f"*{failed[0]['engine']} on *ratings*"])
