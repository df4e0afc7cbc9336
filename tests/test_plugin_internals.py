"""The plugin touches private parts of pytest, xdist and pytest-html in one module only
(``needle_lib/plugin/internals.py``), each covered here or in ``test_case_retention.py``
against the installed versions, which ``pyproject.toml`` bounds from above."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import needle_lib

PLUGIN = Path(needle_lib.__file__).parent / "plugin"
#: How code reaches a private part of the three packages.
PRIVATE = re.compile(r"\b_pytest\b|pytest_html\.basereport|\"_reports\"|\._nodeid\b|"
                     r"\._id\b|\bxdist\.[a-z_.]*\._|stats\.get\(QUIET\)")


def test_only_the_internals_module_reaches_into_private_parts() -> None:
    root = Path(needle_lib.__file__).parent
    found = sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                   if PRIVATE.search(path.read_text(encoding="utf-8")))
    assert found == ["plugin/internals.py"]


def test_the_plugin_reads_in_at_most_twelve_modules() -> None:
    assert len(list(PLUGIN.rglob("*.py"))) <= 12


GROUPED = """
import os
from pathlib import Path

import pytest

@pytest.mark.parametrize("n", range(4))
@pytest.mark.xdist_group("left")
def test_left(n):
    Path(f"left-{n}").write_text(os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("n", range(4))
@pytest.mark.xdist_group("right")
def test_right(n):
    Path(f"right-{n}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_loadgroup_keeps_each_group_on_one_worker(pytester: pytest.Pytester,
                                                  tmp_path: Path) -> None:
    """xdist 3.8 under pytest 9.2 loses the ``@group`` suffix of node ids and scatters every
    group (pytest-xdist#1386); ``internals.keep_group_suffixes`` restores it."""
    pytester.makepyfile(test_grouped=GROUPED)
    result = pytester.runpytest_subprocess(
        "-p", "needle_lib.plugin", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
        "--results-dir", str(tmp_path / "results"), "--html", str(tmp_path / "page.html"))
    result.assert_outcomes(passed=8)
    for group in ("left", "right"):
        workers = {(pytester.path / f"{group}-{n}").read_text() for n in range(4)}
        assert len(workers) == 1, (group, workers)


QUIET_PROBE = """
import json
from pathlib import Path

from needle_lib.plugin import internals

def pytest_terminal_summary(terminalreporter, config):
    Path("probe.json").write_text(json.dumps({
        "tables": [sorted(table) for table in internals.html_case_tables(config)],
        "writers": len(internals.html_writers(config)),
        "quiet": len(terminalreporter.stats.get(internals.QUIET, [])),
    }))
"""


def test_the_internals_find_what_they_reach_for(pytester: pytest.Pytester,
                                                tmp_path: Path) -> None:
    """Without Needle's plugin, pytest-html keeps each case's reports in its table and the
    terminal reporter lists each passing setup and teardown report as quiet: the two
    places ``runtime.CaseRetention`` lets go of (``test_case_retention.py`` checks it
    does)."""
    pytester.makepyfile(test_two="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    pytester.makepyfile(needle_probe=QUIET_PROBE)
    result = pytester.runpytest_subprocess(
        "-p", "needle_probe", "-p", "no:cacheprovider", "--html", str(tmp_path / "page.html"))
    result.assert_outcomes(passed=2)
    probe = json.loads((pytester.path / "probe.json").read_text())
    assert probe["writers"] == 1
    assert probe["tables"] == [["test_two.py::test_a", "test_two.py::test_b"]]
    assert probe["quiet"] == 4  # a setup and a teardown report per case

