"""``--concurrency N``: requests overlap, while ids, verdicts, dumps and guards stay serial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from evalrun import EVALS, load_dump, run_evals, wait_for_cases

from needle_lib.paths import REPO_ROOT
from needle_lib.recall.journal import read_dump
from needle_lib.testing.openai_server import FakeOpenAIServer

SELECT = ("-k", "http_server", "--corpus", "http_server")
#: Fields that say when and how fast, not what: they differ between any two runs.
TIMING = {"requested_at", "latency_s", "timings"}


def cases(dump: dict) -> list[dict]:
    """The dump's cases in stored order, timing aside."""
    return [{k: v for k, v in case.items() if k not in TIMING} for case in dump["cases"]]


def test_concurrent_runs_store_what_a_serial_run_stores(pytester, tmp_path):
    models = []
    for name in ("a", "b"):  # two pairs, so -n 2 has a pair per worker
        config = tmp_path / f"{name}.toml"
        config.write_text(f'name = "{name}"\nconcurrency = 2\n')
        models += ["--model", str(config)]
    runs = {  # name: (extra options, the concurrency that applies)
        "serial": (("--concurrency", "1"), 1),  # the flag overrides the configs
        "concurrent": (("--concurrency", "3"), 3),
        "workers": (("-n", "2"), 2),  # the configs' concurrency, per worker
    }
    outcomes = {}
    for name, (extra, _) in runs.items():
        with FakeOpenAIServer("mixed", latency=0.05) as server:
            result = run_evals(pytester, tmp_path / name, *SELECT, "--sample", "6", *models,
                               "--base-url", server.url, *extra)
        outcomes[name] = {k: result.parseoutcomes().get(k) for k in ("passed", "failed")}
        assert server.stats.max_in_flight <= 2 * runs[name][1]  # a pair per worker at most
        if name != "workers":
            assert server.stats.max_in_flight <= runs[name][1]
    assert outcomes["serial"]["passed"] and outcomes["serial"]["failed"]  # both verdicts
    assert outcomes["concurrent"] == outcomes["workers"] == outcomes["serial"]
    for model in ("a", "b"):
        expected = load_dump(tmp_path / "serial", f"http_server__{model}")
        for name, (_, concurrency) in runs.items():
            dump = load_dump(tmp_path / name, f"http_server__{model}")
            assert cases(dump) == cases(expected)
            assert dump["summary"] | {"latency_s": None} == expected["summary"] | {
                "latency_s": None}
            assert dump["model"]["request"]["concurrency"] == concurrency
            assert (dump["valid"], dump["complete"]) == (True, True)


def test_requests_in_flight_are_bounded_by_the_concurrency(pytester, tmp_path):
    with FakeOpenAIServer("perfect", latency=0.3) as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--sample", "7", "--model", "m",
                           "--base-url", server.url, "--concurrency", "3")
    result.assert_outcomes(passed=7)
    assert server.stats.requests == 1 + 7  # one preflight, each case asked once
    assert server.stats.max_in_flight == 3


def test_preflight_failure_under_concurrency_sends_no_case_request(pytester, tmp_path):
    with FakeOpenAIServer("overflow") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--sample", "4", "--model", "m",
                           "--base-url", server.url, "--concurrency", "4")
    result.assert_outcomes(errors=1, skipped=3)  # the preflight's case, then the pair skips
    assert server.stats.requests == 1  # the preflight only
    result.stdout.fnmatch_lines(["*preflight for http_server__m failed*"])


def test_fail_fast_under_concurrency_gives_the_serial_verdicts(pytester, tmp_path):
    dumps = {}
    sent = {}
    for name, extra in (("serial", ()), ("concurrent", ("--concurrency", "3"))):
        with FakeOpenAIServer("broken-json", answer_first=1) as server:  # preflight passes
            result = run_evals(pytester, tmp_path / name, *SELECT, "--sample", "6",
                               "--model", "m", "--base-url", server.url, *extra)
        result.assert_outcomes(errors=2, skipped=4)
        text = (tmp_path / name / "http_server__m.json").read_text()
        dumps[name] = json.loads(text.replace(server.url, "SERVER"))
        sent[name] = server.stats.requests
    assert cases(dumps["concurrent"]) == cases(dumps["serial"])
    assert sent["serial"] == 1 + 2
    # requests already in flight when fail-fast trips are the only extra ones
    assert sent["serial"] <= sent["concurrent"] <= sent["serial"] + 3 - 1


def test_an_explicit_scattering_dist_mode_is_refused(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, *SELECT, "--concurrency", "2", "-n", "2",
                       "--dist", "load")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --dist load cannot be used with concurrency > 1*"])


def test_kill_loses_at_most_the_requests_in_flight_and_resume_finishes(pytester, tmp_path):
    results = tmp_path / "results"
    dump_file = results / "http_server__slow.json"
    with FakeOpenAIServer("perfect", latency=0.3) as server:
        args = [sys.executable, "-m", "pytest", str(EVALS / "test_recall.py"), *SELECT,
                "--sample", "8", "--model", "slow", "--base-url", server.url,
                "--concurrency", "2", "--results-dir", str(results), "-p",
                "no:cacheprovider", "-q"]
        proc = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_for_cases(dump_file, 2)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        crashed = read_dump(dump_file)
        done = [c for c in crashed["cases"] if c["outcome"] == "passed"]
        assert crashed["in_progress"] is True and 2 <= len(done) < 8
        before = server.stats.requests
        # at most: preflight, the recorded cases, the case being recorded, 2 sent ahead
        assert before <= 1 + len(done) + 1 + 2

    # a different concurrency (or address) does not change answers, so the dump resumes;
    # a second server counts the resumed run's requests alone (under load, the killed
    # run's last requests can still reach the first server after the kill)
    with FakeOpenAIServer("perfect", latency=0.3) as fresh:
        result = run_evals(pytester, results, *SELECT, "--sample", "8", "--model", "slow",
                           "--base-url", fresh.url, "--resume", "--concurrency", "3")
        asked = fresh.stats.requests
    result.assert_outcomes(passed=8)
    final = load_dump(results, "http_server__slow")
    assert (final["in_progress"], final["complete"], final["valid"]) == (False, True, True)
    assert asked == 1 + (8 - len(done))
    assert sum(bool(c.get("resumed")) for c in final["cases"]) == len(done)
