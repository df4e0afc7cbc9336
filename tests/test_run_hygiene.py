"""A run leaves only what it measured: no placeholder cases, no empty reports, readable files."""

from __future__ import annotations

import stat
import subprocess

import pytest
from evalrun import run_evals

from needle_lib.jsonio import write_json_atomic
from needle_lib.paths import REPO_ROOT

SOURCE = "def checksum(data):\n" + "".join(
    f"    step_{i} = len(data) * {i} + {i * i}\n" for i in range(24)) + "    return step_23\n"


def test_a_recall_only_run_counts_its_cases_and_nothing_else(pytester, tmp_path):
    source = tmp_path / "x.py"
    source.write_text(SOURCE)
    result = run_evals(pytester, tmp_path / "r", "--file", str(source), module="")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert result.parseoutcomes() == {"passed": 1}  # no search-bench placeholders
    view = tmp_path / "r" / "x__reference.json"
    (run,) = (tmp_path / "r" / "runs" / "x__reference").glob("*.json")
    (report,) = (tmp_path / "r" / "reports").glob("*.html")
    for path in (view, run, report):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_collect_only_and_empty_selections_write_no_report(pytester, tmp_path):
    collect = run_evals(pytester, tmp_path / "c", "--collect-only", "-q", module="")
    assert collect.ret == pytest.ExitCode.OK
    empty = run_evals(pytester, tmp_path / "e", "-k", "jqeury", module="")  # a corpus typo
    assert empty.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    empty.stdout.fnmatch_lines(
        ["no case ran: -k 'jqeury' matches no recall case: did you mean jquery (a corpus)?"])
    assert "query set" not in empty.stdout.str()  # not the search benchmarks' hint
    assert not list(tmp_path.glob("*/reports/*.html"))


def test_atomic_writes_are_world_readable(tmp_path):
    path = tmp_path / "sub" / "data.json"
    write_json_atomic(path, {"a": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_history_directories_are_git_ignored():
    ignored = subprocess.run(["git", "check-ignore", "-q", "history/latest/news.json"],
                             cwd=REPO_ROOT, check=False)
    assert ignored.returncode == 0
