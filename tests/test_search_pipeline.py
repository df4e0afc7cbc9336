"""Search lanes: engines overlap and judging is pipelined, yet a run records what a serial
run records, case for case (timing aside); ``--judge-concurrency`` holds across workers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalrun import run_evals
from test_finance_evals import SCRIPT, write_gold

from needle_lib.testing.search_server import FakeSearchServer

#: What says when, how fast and which of several cases asked first: differs between runs.
TIMING = {"latency_s", "latency", "judge_requests", "started_at"}
RUNS = {"serial": ("--search-lookahead", "1"), "lanes": (), "workers": ("-n", "2")}


def without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def report_of(results, bench):
    (path,) = (results / "search").glob(f"{bench}__*.json")
    return json.loads(path.read_text())


def cases_of(report):
    return sorted(without_timing(report["cases"]), key=lambda c: (c["query_id"], c["engine"]))


def serve(monkeypatch, tmp_path, name, **server_args):
    server = FakeSearchServer(**server_args)
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / f"cache-{name}"))  # judged afresh
    return server


def test_news_lanes_and_workers_record_the_serial_run(pytester, tmp_path, monkeypatch):
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"story number {i}\n" for i in range(6)))
    latency = {"exa": 0.05, "brave": 0.1, "judge": 0.05}
    reports, servers = {}, {}
    for name, extra in RUNS.items():
        with serve(monkeypatch, tmp_path, name, latency=latency) as server:
            result = run_evals(pytester, tmp_path / name, "-k", "news", "--queries",
                               str(queries), "--engines", "exa,brave",
                               "--judge-concurrency", "3", *extra, module="")
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        reports[name], servers[name] = report_of(tmp_path / name, "news"), server
    serial = reports["serial"]
    assert len(serial["cases"]) == 12 and serial["judged_pairs"] > 0
    for name, report in reports.items():
        assert cases_of(report) == cases_of(serial), name
        assert without_timing(report["engines"]) == without_timing(serial["engines"]), name
        # one search in flight per engine; the judge bound holds for the run, workers too
        assert servers[name].max_in_flight["exa"] == servers[name].max_in_flight["brave"] == 1
        assert servers[name].max_in_flight["judge"] <= 3, name
    assert servers["serial"].max_in_flight["search"] == 1
    assert servers["lanes"].max_in_flight["search"] == 2  # both engines at once
    assert servers["lanes"].max_in_flight["judge"] == 3
    # the same judge calls, each counted for one case
    assert reports["lanes"]["judge_requests"] == serial["judge_requests"] == (
        servers["serial"].requests["judge"])


def test_known_item_lanes_with_the_backstop_record_the_serial_run(pytester, tmp_path,
                                                                   monkeypatch):
    gold = write_gold(tmp_path)
    reports = {}
    # -n 2 on this bench: test_finance_evals.test_parallel_run_gives_the_serial_report
    for name in ("serial", "lanes"):
        extra = RUNS[name]
        with serve(monkeypatch, tmp_path, name, scripted=SCRIPT,
                   latency={"exa": 0.02, "brave": 0.02, "judge": 0.02}) as server:
            run_evals(pytester, tmp_path / name, "-k", "finance", "--queries", str(gold),
                      "--engines", "exa,brave", "--judge", *extra, module="")
        reports[name] = report_of(tmp_path / name, "finance")
        assert server.max_in_flight["exa"] == server.max_in_flight["brave"] == 1
    serial = reports["serial"]
    assert any(c["judged"] for c in serial["cases"])  # the backstop was asked
    for name, report in reports.items():
        assert cases_of(report) == cases_of(serial), name
        assert without_timing(report["engines"]) == without_timing(serial["engines"]), name
    assert (sum(c["judge_requests"] for c in reports["lanes"]["cases"])
            == sum(c["judge_requests"] for c in serial["cases"]) > 0)


def test_identical_results_of_two_engines_are_judged_once(pytester, tmp_path, monkeypatch):
    same = [{"url": f"https://news.example/{i}", "title": f"story {i}", "snippet": "the story"}
            for i in range(2)]
    queries = tmp_path / "q.txt"
    queries.write_text("shared story\n")
    script = {("exa", "shared story"): same, ("brave", "shared story"): same}
    with serve(monkeypatch, tmp_path, "dedup", scripted=script,
               latency={"judge": 0.05}) as server:
        run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                  "--engines", "exa,brave", module="")
    assert len(server.verdict_prompts) == 2 and server.requests["profile"] == 1
    report = report_of(tmp_path, "news")
    assert report["judge_requests"] == 3
    exa, brave = sorted(report["cases"], key=lambda c: c["engine"] != "exa")
    assert [r["rating"] for r in exa["results"]] == [r["rating"] for r in brave["results"]]


def test_fail_fast_with_lanes_gives_the_serial_verdicts(pytester, tmp_path, monkeypatch):
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"query {i}\n" for i in range(6)))
    script = {("brave", f"query {i}"): 400 for i in range(6)}
    outcomes, sent = {}, {}
    for name in ("serial", "lanes"):
        with serve(monkeypatch, tmp_path, name, scripted=script) as server:
            result = run_evals(pytester, tmp_path / name, "-k", "news", "--queries",
                               str(queries), "--engines", "exa,brave",
                               "--search-lookahead", "3" if name == "lanes" else "1",
                               module="")
        outcomes[name] = result.parseoutcomes()
        sent[name] = server.requests["brave"]
        report = report_of(tmp_path / name, "news")
        assert [c["outcome"] for c in sorted(report["cases"], key=lambda c: c["query_id"])
                if c["engine"] == "brave"].count("error") == 2
    assert outcomes["lanes"] == outcomes["serial"]
    assert outcomes["serial"]["errors"] == 2 and outcomes["serial"]["skipped"] == 4
    # the lane stops sending once tripped: at most its look-ahead beyond the serial run
    assert sent["serial"] == 2 and sent["lanes"] <= 2 + 3


def test_judge_calls_are_served_in_run_order_profiles_first(pytester, tmp_path, monkeypatch):
    """With look-ahead, the judge's queue holds calls of many later cases. A free slot goes
    first to query profiles (each gates every verdict of its query; served in run order
    they came due only when the cases started ahead had drained, and the judge idled), then
    to the earliest case in run order: the one pytest is waiting for.

    Exa answers at once and Brave after 1.5 s, so Exa's verdicts of later queries are queued
    before Brave's verdict of the first query; that one (the second case in run order) is
    served right after Exa's, not behind them as first come, first served would. (Exa's
    eight searches take far less than a judge call, so all eight profiles are waiting when
    the first one returns.)"""
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"story number {i}\n" for i in range(8)))
    with serve(monkeypatch, tmp_path, "order", latency={"brave": 1.5, "judge": 0.6}) as server:
        run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                  "--engines", "exa,brave", "--num-results", "1", "--judge-concurrency", "1",
                  module="")
    calls = server.judge_calls
    assert len(calls) == 8 + 16
    assert {kind for kind, _ in calls[:8]} == {"profile"}, calls[:9]
    verdicts = [("Brave: " in prompt, query) for prompt, (_, query)
                in zip(server.verdict_prompts, [c for c in calls if c[0] == "verdict"],
                       strict=True)]
    assert verdicts[:3] == [(False, "story number 0"), (True, "story number 0"),
                            (False, "story number 1")], verdicts[:4]
