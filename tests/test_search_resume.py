"""``--resume`` on search runs (issue 20, item 13): the answered cases of the newest earlier
run of the same setup — from its report, or from the journal of a killed run — are kept and
never searched or judged again (counted at the loopback fakes); errors and skips run again;
the resumed report equals an uninterrupted run's, case for case; another setup is refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from evalrun import EVALS, run_evals
from test_finance_evals import SCRIPT, write_gold
from test_search_pipeline import serve, without_timing

from needle_lib.benches.runfiles import SearchJournal, read_run
from needle_lib.contract.outcome import is_answered
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_path
from needle_lib.paths import REPO_ROOT
from needle_lib.report.case_page import SUFFIX

NEWS = ("-k", "news", "--engines", "exa,brave")
RESULTS_PER_CASE = 5  # the judged benches' default K: one verdict request per result
#: Marks a kept case (the earlier run's counters ride along); an uninterrupted run has none.
RESUMED = "resumed"


def assert_refused(result: pytest.RunResult, *lines: str) -> None:
    """pytest's usage error (exit 4, ``ERROR: …`` on stderr, no traceback), raised once
    collection shows the bench runs, so after pytest's session header."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: {lines[0]}", *lines[1:]])
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and not re.search(r"\.py:\d+: in ", output), output
    assert "no case ran" not in output  # the refusal says why, nothing else


def news_queries(tmp_path: Path, count: int = 6) -> Path:
    path = tmp_path / "q.txt"
    path.write_text("".join(f"story number {i}\n" for i in range(count)))
    return path


def the_report(results: Path, bench: str) -> tuple[Path, dict]:
    """The one finished report of the run that wrote into ``results``."""
    (path,) = (results / "search").glob(f"{bench}__*[0-9].json")
    return path, json.loads(path.read_text())


def newest_report(results: Path, bench: str) -> dict:
    paths = (results / "search").glob(f"{bench}__*[0-9].json")
    return json.loads(max(paths, key=lambda p: p.stat().st_mtime_ns).read_text())


def comparable(report: dict) -> list[dict]:
    """A report's cases without timing or the resume mark, in a fixed order."""
    cases = [{k: v for k, v in case.items() if k != RESUMED} for case in report["cases"]]
    return sorted(without_timing(cases), key=lambda c: (c["query_id"], c["engine"]))


def assert_same_report(resumed: dict, whole: dict) -> None:
    assert comparable(resumed) == comparable(whole)
    assert without_timing(resumed["engines"]) == without_timing(whole["engines"])
    assert resumed["complete"] == whole["complete"]


def assert_resume_asks_only_the_unanswered(
    pytester, results: Path, bench: str, server, *args: str, module: str
) -> None:
    """Rerun the run in ``results`` with ``--resume`` against ``server``: only its
    unanswered cases reach the engines, none the judge, and the report is the same."""
    _, first = the_report(results, bench)
    unanswered: Counter[str] = Counter()
    for case in first["cases"]:
        if not is_answered(case):  # each attempt is a request: asked again as often
            unanswered[case["engine"]] += 1 + case["retries"]
    before = Counter(server.requests)
    result = run_evals(pytester, results, *args, "--resume", module=module)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    asked = Counter(server.requests)
    asked.subtract(before)
    assert {e: asked[e] for e in ("exa", "brave", "judge")} == {
        "exa": unanswered["exa"],
        "brave": unanswered["brave"],
        "judge": 0,
    }
    assert_same_report(newest_report(results, bench), first)


def journal_cases(results: Path) -> int:
    """Complete case lines in the run's journal so far (0 before it exists)."""
    journals = list((results / "search").glob(f"*{JOURNAL_SUFFIX}"))
    if not journals:
        return 0
    return sum(
        line.endswith("\n") and line.startswith('{"case"')
        for line in journals[0].read_text(encoding="utf-8").splitlines(keepends=True)
    )


def wait_for_journal(results: Path, count: int, proc: subprocess.Popen) -> None:
    """Until the journal holds ``count`` cases; the generous deadline only bounds a broken
    run, it never paces a good one."""
    deadline = time.monotonic() + 120
    while journal_cases(results) < count:
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, f"the journal never held {count} cases"
        time.sleep(0.05)


def test_killed_and_cut_runs_resume_to_the_uninterrupted_report(pytester, tmp_path, monkeypatch):
    """Both ways a run ends early, checked against one uninterrupted run of the same setup:
    a run killed mid-way (its journal), and a journal cut mid-line with an engine error in
    it, resumed under xdist."""
    queries = news_queries(tmp_path)
    args = (*NEWS, "--queries", str(queries))
    with serve(monkeypatch, tmp_path, "whole"):
        run_evals(pytester, tmp_path / "whole", *args, module="")
    _, whole = the_report(tmp_path / "whole", "news")
    assert len(whole["cases"]) == 12
    resume_a_killed_run(pytester, tmp_path, monkeypatch, args, whole)
    resume_a_cut_journal(pytester, tmp_path, monkeypatch, args, whole)


def resume_a_killed_run(pytester, tmp_path, monkeypatch, args, whole) -> None:
    results = tmp_path / "killed"
    with serve(monkeypatch, tmp_path, "killed", latency={"exa": 0.3, "brave": 0.3}):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                str(EVALS),
                f"--rootdir={REPO_ROOT}",
                "--results-dir",
                str(results),
                "-p",
                "no:cacheprovider",
                "-q",
                *args,
            ],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_journal(results, 4, proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    (journal,) = (results / "search").glob(f"*{JOURNAL_SUFFIX}")
    assert not list((results / "search").glob("*.json"))  # killed before any report
    _, journaled = read_run(journal)
    kept = sum(is_answered(case) for case in journaled)
    assert 4 <= kept < 12

    # another server (the killed run's late requests cannot count) and a fresh judge cache
    with serve(monkeypatch, tmp_path, "resumed") as fresh:
        result = run_evals(pytester, results, *args, "--resume", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    result.stdout.fnmatch_lines(
        [
            f"--resume: news: reusing {kept} answered case(s) of {journal}; the rest are asked",
            f"--resume: news: removed {journal}, the killed run's journal: "
            "this run's report holds every case it kept",
        ]
    )
    # the new report holds every kept case: the killed run's journal is gone, not a second
    # copy for a later --resume, merge or publish
    assert not journal.exists()
    assert list((results / "search").glob(f"*{JOURNAL_SUFFIX}")) == []
    # kept cases were neither searched nor judged: only the rest reached the fakes
    assert fresh.requests["exa"] + fresh.requests["brave"] == 12 - kept
    assert len(fresh.verdict_prompts) == RESULTS_PER_CASE * (12 - kept)
    resumed = newest_report(results, "news")
    assert_same_report(resumed, whole)
    assert sum(bool(case.get(RESUMED)) for case in resumed["cases"]) == kept
    assert resumed["header"]["resumed_from"] == {"run": str(journal), "answered_cases": kept}


def cut_journal(report_path: Path, keep: int, *, first: tuple[str, str]) -> Path:
    """Turn a finished report back into the journal of a run killed mid-line: its header,
    ``keep`` cases (``first`` = (query, engine) leading) and half of the next line."""
    header, cases = read_run(report_path)
    cases.sort(key=lambda c: (c["query"], c["engine"]) != first)
    journal = journal_path(report_path)
    lines = [json.dumps({"header": header})] + [json.dumps({"case": c}) for c in cases]
    cut = lines[keep + 1][: len(lines[keep + 1]) // 2]
    journal.write_text("\n".join(lines[: keep + 1]) + "\n" + cut, encoding="utf-8")
    report_path.unlink()
    return journal


def resume_a_cut_journal(pytester, tmp_path, monkeypatch, args, whole) -> None:
    """Errors run again; the rest are kept, under xdist and lanes."""
    results = tmp_path / "resumed"
    failing = {("brave", "story number 2"): 400}  # an engine error: not a measurement
    with serve(monkeypatch, tmp_path, "cut-first", scripted=failing):
        run_evals(pytester, results, *args, module="")
    first_path, first = the_report(results, "news")
    assert [c["outcome"] for c in first["cases"]].count("error") == 1
    journal = cut_journal(first_path, 7, first=("story number 2", "brave"))
    _, journaled = read_run(journal)  # the cut line is forgiven: the case in flight
    assert len(journaled) == 7
    kept = sum(is_answered(case) for case in journaled)
    assert kept == 6  # the errored case is in the journal, and is not kept

    with serve(monkeypatch, tmp_path, "cut-resumed", latency={"exa": 0.02, "brave": 0.02}) as fresh:
        result = run_evals(pytester, results, *args, "--resume", "-n", "2", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert fresh.requests["exa"] + fresh.requests["brave"] == 12 - kept
    assert len(fresh.verdict_prompts) == RESULTS_PER_CASE * (12 - kept)
    assert fresh.max_in_flight["exa"] == fresh.max_in_flight["brave"] == 1
    resumed = newest_report(results, "news")
    assert_same_report(resumed, whole)
    retried = [
        c for c in resumed["cases"] if (c["query"], c["engine"]) == ("story number 2", "brave")
    ]
    assert retried[0]["outcome"] != "error" and not retried[0].get(RESUMED)


def test_known_item_resume_with_the_backstop_asks_only_the_errored_case(
    pytester, tmp_path, monkeypatch
):
    gold = write_gold(tmp_path)
    args = ("-k", "finance", "--queries", str(gold), "--engines", "exa,brave", "--judge")
    fixed = {
        **SCRIPT,
        ("brave", "apple founded year"): [
            {"url": "https://b.example/3", "title": "Apple", "snippet": "founded in 1976"}
        ],
    }
    with serve(monkeypatch, tmp_path, "whole", scripted=fixed):
        run_evals(pytester, tmp_path / "whole", *args, module="")
    _, whole = the_report(tmp_path / "whole", "finance")
    # a case the backstop was not asked about records no judge identity, whatever ran first
    unasked = [c for c in whole["cases"] if c["judged"] == 0]
    assert unasked and all(c["judge_served_model"] is None for c in unasked)

    results = tmp_path / "resumed"
    with serve(monkeypatch, tmp_path, "first", scripted=SCRIPT):  # brave errors on one row
        run_evals(pytester, results, *args, module="")
    _, first = the_report(results, "finance")
    errored = [c for c in first["cases"] if c["outcome"] == "error"]
    assert [(c["engine"], c["query"]) for c in errored] == [("brave", "apple founded year")]
    assert sum(c["judge_requests"] for c in first["cases"]) > 0  # the backstop was asked

    with serve(monkeypatch, tmp_path, "resumed", scripted=fixed) as fresh:
        result = run_evals(pytester, results, *args, "--resume", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert (fresh.requests["exa"], fresh.requests["brave"]) == (0, 1)
    resumed = newest_report(results, "finance")
    asked = [c for c in resumed["cases"] if not c.get(RESUMED)]
    assert [(c["engine"], c["query"]) for c in asked] == [("brave", "apple founded year")]
    assert fresh.requests["judge"] == asked[0]["judge_requests"]  # that case's alone
    assert_same_report(resumed, whole)
    # a resumed run resumes in turn: everything is answered now, nothing is asked
    with serve(monkeypatch, tmp_path, "again", scripted=fixed) as again:
        result = run_evals(pytester, results, *args, "--resume", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert sum(again.requests.values()) == 0
    twice = newest_report(results, "finance")
    assert all(case.get(RESUMED) for case in twice["cases"])
    assert_same_report(twice, whole)


def test_another_setup_is_refused_naming_the_differing_keys(pytester, tmp_path, monkeypatch):
    queries = news_queries(tmp_path, 2)
    args = ("-k", "news", "--engines", "exa", "--queries", str(queries))
    with serve(monkeypatch, tmp_path, "first"):
        run_evals(pytester, tmp_path, *args, module="")
    (earlier,) = (tmp_path / "search").glob("news__*.json")
    refusals = {
        ("--judge-model", "other-judge"): "*judge.model: 'fake-judge' (earlier run) vs "
        "'other-judge' (this run)",
        ("--num-results", "3"): "*num_results: 5 (earlier run) vs 3 (this run)",
    }
    with serve(monkeypatch, tmp_path, "refused") as server:
        for extra, line in refusals.items():
            result = run_evals(pytester, tmp_path, *args, *extra, "--resume", module="")
            assert_refused(
                result,
                f"--resume: {earlier} was produced by a different setup; refusing to mix:",
                line,
            )
        queries.write_text("story number 0\nanother story\n")  # same file, other content
        result = run_evals(pytester, tmp_path, *args, "--resume", "-n", "2", module="")
        assert_refused(result, "--resume*different setup*", "*queries.sha256:*")
        assert sum(server.requests.values()) == 0
    assert list((tmp_path / "search").glob("news__*.json")) == [earlier]
    pages = [p for p in (tmp_path / "reports").glob("*.html") if not p.name.endswith(SUFFIX)]
    assert len(pages) == 1  # the first run's page only


def test_a_bench_the_run_does_not_select_is_never_refused(pytester, tmp_path, monkeypatch):
    """A plain query file feeds both judged benches: an earlier agentic_rare run of another
    setup blocks ``-k agentic_rare --resume``, never ``-k news --resume``."""
    queries = news_queries(tmp_path, 2)
    with serve(monkeypatch, tmp_path, "rare"):
        run_evals(
            pytester,
            tmp_path,
            "-k",
            "agentic_rare",
            "--engines",
            "exa",
            "--queries",
            str(queries),
            "--judge-model",
            "other-judge",
            module="",
        )
    with serve(monkeypatch, tmp_path, "news") as server:
        news = run_evals(
            pytester,
            tmp_path,
            "-k",
            "news",
            "--engines",
            "exa",
            "--queries",
            str(queries),
            "--resume",
            module="",
        )
        assert news.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        assert server.requests["exa"] == 2
        for workers in ((), ("-n", "2")):
            rare = run_evals(
                pytester,
                tmp_path,
                "-k",
                "agentic_rare",
                "--engines",
                "exa",
                "--queries",
                str(queries),
                "--resume",
                *workers,
                module="",
            )
            assert_refused(
                rare,
                "--resume*agentic_rare__q__*different setup*",
                "*judge.model: 'other-judge' (earlier run) vs 'fake-judge'*",
            )
        assert server.requests["exa"] == 2


def test_a_shard_resumes_its_own_earlier_part_only(pytester, tmp_path, monkeypatch):
    """Shard 1 resumes its part; shard 2 has no earlier run: it says so, asks everything
    and its report names nothing it resumed from (this was a run of its own once)."""
    queries = news_queries(tmp_path, 4)
    args = (*NEWS, "--queries", str(queries))
    with serve(monkeypatch, tmp_path, "first"):
        run_evals(pytester, tmp_path, *args, "--shard", "1/2", module="")
    (part,) = (tmp_path / "search").glob("news__*.shard-1-of-2.json")
    with serve(monkeypatch, tmp_path, "again") as server:
        again = run_evals(pytester, tmp_path, *args, "--shard", "1/2", "--resume", module="")
        assert sum(server.requests.values()) == 0
        again.stdout.fnmatch_lines([f"--resume: news: reusing 4 answered case(s) of {part};*"])
        other = run_evals(pytester, tmp_path, *args, "--shard", "2/2", "--resume", module="")
        assert other.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        other.stdout.fnmatch_lines(
            [f"--resume: news: no earlier run of this setup in {tmp_path / 'search'}; "
             "every case is asked"]
        )
        assert server.requests["exa"] == server.requests["brave"] == 2
    (second,) = (tmp_path / "search").glob("news__*.shard-2-of-2.json")
    assert "resumed_from" not in json.loads(second.read_text())["header"]


def test_a_resumed_journal_stays_while_its_writer_lives_or_cases_are_left_out(
    pytester, tmp_path, monkeypatch
):
    """The journal a run resumed is removed only when nothing is lost and nobody writes it:
    a journal its run still writes (a live ``Journal`` here) stays, and so does one whose
    kept cases the resumed run did not all record (``--engines exa`` leaves brave's out)."""
    queries = news_queries(tmp_path, 2)
    args = ("-k", "news", "--queries", str(queries))
    with serve(monkeypatch, tmp_path, "whole"):
        run_evals(pytester, tmp_path / "whole", *args, "--engines", "exa,brave", module="")
    whole_path, _ = the_report(tmp_path / "whole", "news")
    header, cases = read_run(whole_path)
    assert sum(is_answered(case) for case in cases) == 4

    live_dir = tmp_path / "live" / "search"
    live_dir.mkdir(parents=True)
    live = SearchJournal(journal_path(live_dir / whole_path.name), header)
    try:
        for case in cases[:3]:
            live.append(case)
        with serve(monkeypatch, tmp_path, "live") as server:
            result = run_evals(
                pytester,
                tmp_path / "live",
                *args,
                "--engines",
                "exa,brave",
                "--resume",
                module="",
            )
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        result.stdout.fnmatch_lines(
            [f"--resume: news: reusing 3 answered case(s) of {live.path};*"]
        )
        assert server.requests["exa"] + server.requests["brave"] == 1  # every kept case ran
        assert "removed" not in result.stdout.str()
        assert live.path.is_file()
    finally:
        live.close(remove=False)

    narrow_dir = tmp_path / "narrow" / "search"
    narrow_dir.mkdir(parents=True)
    shutil.copy(whole_path, narrow_dir / whole_path.name)
    journal = cut_journal(narrow_dir / whole_path.name, 3, first=("story number 0", "brave"))
    with serve(monkeypatch, tmp_path, "narrow"):
        result = run_evals(
            pytester, tmp_path / "narrow", *args, "--engines", "exa", "--resume", module=""
        )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    result.stdout.fnmatch_lines([f"--resume: news: reusing 3 answered case(s) of {journal};*"])
    assert "removed" not in result.stdout.str()
    assert journal.is_file()
