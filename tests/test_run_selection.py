"""A run that ``-k`` restricts to part of a pair's (or a bench's) cases says so: its dump
or report is not complete, and the summary labels it ⚠ INCOMPLETE, so it never reads as a
full run (docs/recall.md: the latest view prefers a complete run)."""

from __future__ import annotations

import json

import pytest
from evalrun import run_evals
from test_search_pipeline import report_of, serve

from needle_lib.recall.results import INCOMPLETE_STATUS


def _dump(results):
    (path,) = (results / "runs" / "http_server__reference").glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_k_subset_of_a_pair_is_labelled_incomplete(pytester, tmp_path):
    part = run_evals(pytester, tmp_path / "part", "-k", "http_server and not send_error")
    assert part.ret == pytest.ExitCode.OK, part.stdout.str()
    dump = _dump(tmp_path / "part")
    assert len(dump["cases"]) < dump["expected_cases"] and dump["complete"] is False
    part.stdout.fnmatch_lines([f"http_server *reference *{INCOMPLETE_STATUS}"])

    whole = run_evals(pytester, tmp_path / "whole", "-k", "http_server")
    assert _dump(tmp_path / "whole")["complete"] is True
    whole.stdout.fnmatch_lines(["http_server *reference * ok"])
    assert INCOMPLETE_STATUS not in whole.stdout.str()


def test_a_k_subset_of_a_benchs_engines_is_labelled_incomplete(pytester, tmp_path,
                                                                monkeypatch):
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"story number {i}\n" for i in range(2)))
    with serve(monkeypatch, tmp_path, "run"):
        result = run_evals(pytester, tmp_path / "results", "-k", "news and exa",
                           "--queries", str(queries), "--engines", "exa,brave", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    report = report_of(tmp_path / "results", "news")
    assert {case["engine"] for case in report["cases"]} == {"exa"}
    assert report["complete"] is False
    result.stdout.fnmatch_lines([f"{INCOMPLETE_STATUS}: not every one of the 4 expected *"])
