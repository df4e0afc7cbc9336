"""Run lifecycle end to end: crash safety and resume, gates, rescore, HTML report, status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from browser import dom_text, screenshot
from evalrun import EVALS, assert_usage_error, load_dump, run_evals, wait_for_cases

from needle_lib.cli import main as needle
from needle_lib.commands.status import dump_state
from needle_lib.paths import REPO_ROOT
from needle_lib.recall.journal import read_dump
from needle_lib.testing.openai_server import FakeOpenAIServer

SELECT = ("-k", "http_server", "--corpus", "http_server", "--sample", "4")


def test_kill_9_loses_at_most_the_case_in_flight_and_resume_finishes(pytester, tmp_path):
    results = tmp_path / "results"
    dump_file = results / "http_server__slow.json"
    with FakeOpenAIServer("perfect", latency=0.5) as server:
        args = [sys.executable, "-m", "pytest", str(EVALS / "test_recall.py"), *SELECT,
                "--sample", "8", "--model", "slow", "--base-url", server.url,
                "--results-dir", str(results), "-p", "no:cacheprovider", "-q"]
        proc = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_for_cases(dump_file, 3)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # the killed run's dump is as its start wrote it; its journal holds every case
        # settled, and readers fold it in (a line cut by the kill is the case in flight)
        run_file = dump_file.resolve()
        journal = run_file.with_name(run_file.stem + ".partial.jsonl")
        assert json.loads(run_file.read_text())["cases"] == [] and journal.is_file()
        crashed = read_dump(dump_file)
        assert crashed["in_progress"] is True and crashed["complete"] is False
        done = [c for c in crashed["cases"] if c["outcome"] == "passed"]
        assert 3 <= len(done) < 8
        state, detail = dump_state(dump_file)  # `needle status` sees the same cases
        assert (state, detail.split(",")[0]) == ("in progress", f"{len(crashed['cases'])}/8 cases")
    # The resumed run asks another server (a base URL is bookkeeping): a request the killed
    # process sent may still reach the first server late on a busy machine.
    with FakeOpenAIServer("perfect") as fresh:
        result = run_evals(pytester, results, *SELECT, "--sample", "8", "--model", "slow",
                           "--base-url", fresh.url, "--resume")
        asked = fresh.stats.requests
    result.assert_outcomes(passed=8)
    final = load_dump(results, "http_server__slow")
    assert (final["in_progress"], final["complete"], final["valid"]) == (False, True, True)
    assert len(final["cases"]) == 8
    # One preflight plus exactly the cases the crashed run had not finished.
    assert asked == 1 + (8 - len(done))
    assert sum(bool(c.get("resumed")) for c in final["cases"]) == len(done)


def test_resume_refuses_a_dump_from_another_setup(pytester, tmp_path):
    run_evals(pytester, tmp_path, *SELECT).assert_outcomes(passed=4)
    result = run_evals(pytester, tmp_path, *SELECT, "--relax-indent", "--resume")
    assert_usage_error(result, "--resume*different setup*", "*scoring*relax_indent*")


def test_resume_under_xdist_refuses_only_the_pairs_that_run(pytester, tmp_path):
    """A ``-k`` that leaves out the pair whose earlier run is of another setup is not
    refused for it under xdist either, where the controller sees only node ids."""
    run_evals(pytester, tmp_path, *SELECT).assert_outcomes(passed=4)
    both = ("--corpus", "http_server", "--corpus", "jquery", "--sample", "2",
            "--relax-indent", "--resume", "-n", "2")
    other = run_evals(pytester, tmp_path, *both, "-k", "jquery")
    other.assert_outcomes(passed=2)
    other.stdout.fnmatch_lines(["--resume: jquery__reference: no earlier run of this setup*"])
    assert "http_server__reference" not in other.stdout.str()
    refused = run_evals(pytester, tmp_path, *both, "-k", "http_server")
    assert_usage_error(refused, "--resume*different setup*", "*scoring*relax_indent*")


def test_gates_fail_on_regression_and_low_score_and_pass_a_perfect_run(pytester, tmp_path):
    with FakeOpenAIServer("perfect") as good, FakeOpenAIServer("wrong") as bad:
        baseline_run = run_evals(pytester, tmp_path / "base", *SELECT, "--model", "m",
                                 "--base-url", good.url)
        baseline_run.assert_outcomes(passed=4)
        baseline = tmp_path / "base" / "http_server__m.json"
        gates = ("--baseline", str(baseline), "--min-score", "0.99")
        wrong = run_evals(pytester, tmp_path / "wrong", *SELECT, "--model", "m",
                          "--base-url", bad.url, *gates)
        right = run_evals(pytester, tmp_path / "right", *SELECT, "--model", "m",
                          "--base-url", good.url, *gates)
    assert wrong.ret == pytest.ExitCode.TESTS_FAILED
    wrong.stdout.fnmatch_lines([
        "*gate --min-score: http_server__m matched 0.000 of scored lines < 0.990*",
        "*gate --baseline: http_server__m: 4 case(s) passed in the baseline and fail now: *",
    ])
    assert right.ret == pytest.ExitCode.OK
    right.stdout.fnmatch_lines(["*all gates passed*"])


def test_an_invalid_run_never_passes_a_gate(pytester, tmp_path):
    with FakeOpenAIServer("http500") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url",
                           server.url, "--min-score", "0")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*gate: http_server__m is invalid*"])


def test_rescore_reindented_run_offline(pytester, tmp_path, capsys):
    with FakeOpenAIServer("reindent") as server:
        run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    dump = tmp_path / "http_server__m.json"
    capsys.readouterr()  # drop pytester's own output
    assert needle(["rescore", str(dump), "--json"]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert needle(["rescore", str(dump), "--relax-indent", "--json"]) == 0
    relaxed = json.loads(capsys.readouterr().out)
    assert strict["summary"]["matched_pct"] == 0.0
    assert strict["summary"]["reindented"] == strict["summary"]["scored"] > 0
    assert relaxed["summary"]["matched_pct"] == 100.0
    assert relaxed["scoring"]["relax_indent"] is True
    assert needle(["rescore", str(dump), "--relax-indent", "--no-color"]) == 0
    text = capsys.readouterr().out
    assert "100.0%" in text and "relax_indent=True" in text


def test_plain_run_leaves_an_html_report_that_renders(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, *SELECT)
    result.assert_outcomes(passed=4)
    reports = list((tmp_path / "reports").glob("*.html"))
    assert len(reports) == 1 and "http_server" in reports[0].name
    result.stdout.fnmatch_lines([f"*Generated html report*{reports[0].name}*"])
    html = reports[0].read_text()
    assert "reference on http_server" in html and "needle-matched" in html  # summary, diff
    png = screenshot(reports[0], tmp_path / "report.png", tmp_path)
    assert png.stat().st_size > 10_000
    dom = dom_text(reports[0], tmp_path)
    assert "test_recall[http_server-" in dom and "4 Passed" in dom


def test_status_names_states_and_commands(tmp_path, capsys):
    results = tmp_path
    base = {"prompt_version": "old", "scorer_version": "old"}
    (results / "jquery__reference.json").write_text(json.dumps(base))
    from needle_lib.recall.prompt import PROMPT_VERSION
    from needle_lib.recall.score import SCORER_VERSION

    current = {"prompt_version": PROMPT_VERSION, "scorer_version": SCORER_VERSION,
               "in_progress": True, "valid": True, "complete": False,
               "corpus": {"name": "http_server", "sha256": "0" * 64},
               "model": {"key": "reference"},
               "scoring": {"count_comments": True, "relax_indent": False}, "cases": [],
               "summary": {"cases": 3, "expected": 16, "errors": 0, "skipped": 0}}
    (results / "http_server__reference.json").write_text(json.dumps(current))
    assert needle(["status", "--model", "reference", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "jquery__reference" in out and "stale" in out
    assert "in progress" in out and "3/16 cases" in out
    assert "--corpus http_server --model reference --resume" in out
    assert "novel_16k__reference" in out and "missing" in out


def test_resume_says_what_each_pair_resumes_and_when_there_was_nothing(pytester, tmp_path):
    """As a search run does, in the same words: the user never has to guess whether a
    ``--resume`` reused anything."""
    first = run_evals(pytester, tmp_path, *SELECT, "--resume")
    first.assert_outcomes(passed=4)
    runs = tmp_path / "runs" / "http_server__reference"
    first.stdout.fnmatch_lines([
        "*= needle resume =*",
        f"--resume: http_server__reference: no earlier run of this setup in {runs}; "
        "every case is asked",
    ])
    earlier = tmp_path / load_dump(tmp_path, "http_server__reference")["stored_as"]
    again = run_evals(pytester, tmp_path, *SELECT, "--resume")
    again.assert_outcomes(passed=4)
    again.stdout.fnmatch_lines([
        "*= needle resume =*",
        f"--resume: http_server__reference: reusing 4 answered case(s) of {earlier}; "
        "the rest are asked",
    ])
