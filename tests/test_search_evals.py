"""End to end, offline: ``pytest evals -k news`` with loopback engines and judge."""

from __future__ import annotations

import json
import math

import pytest
from evalrun import assert_usage_error, run_evals
from fakeclock import PINNED_NOW
from search_runs import undeclared_keys

from needle_lib.metrics.ndcg import GAINS
from needle_lib.testing.search_server import FakeSearchServer

QUERIES = "nvidia earnings\nfed rate decision\nstorm warning seattle\nchampions league draw\n"


@pytest.fixture
def search_env(monkeypatch, tmp_path):
    with FakeSearchServer() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def _report(results):
    (path,) = (results / "search").glob("news__*.json")
    return json.loads(path.read_text())


def _dcg(ratings, k=5):
    return sum(GAINS[r] / math.log2(i + 2) for i, r in enumerate(ratings[:k]))


def test_news_report_recomputes_and_second_run_uses_the_judge_cache(
    pytester, tmp_path, search_env
):
    # rows dated by hour_ts: the judge's "today" (part of every verdict's cache key) is the
    # rows' own date, so the second run hits the cache even if it starts after midnight
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(
        json.dumps({"query_id": f"q{i}", "query": text, "hour_ts": "2026-07-02T14:00:00+00:00"})
        + "\n" for i, text in enumerate(QUERIES.splitlines())))
    args = ("-k", "news", "--queries", str(queries), "--engines", "exa,brave", "-n", "2")
    first = run_evals(pytester, tmp_path / "r1", *args, module="")
    first.stdout.fnmatch_lines(["*needle news summary*", "*exa*", "*brave*", "*ultimate*1.000*"])
    assert first.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    report = _report(tmp_path / "r1")
    assert report["num_queries"] == 4 and report["num_results"] == 5 and report["k"] == 5
    assert report["judged_pairs"] > 0 and report["judge_requests"] == search_env.requests["judge"]
    ideal = {row["query_id"]: _dcg(row["penalized_ratings"])
             for row in report["engines"]["ultimate"]["per_query"]}
    for name in ("exa", "brave", "ultimate"):
        engine = report["engines"][name]
        assert engine["search_errors"] == 0 and engine["judge_errors"] == 0
        scores = [_dcg(row["penalized_ratings"]) / ideal[row["query_id"]]
                  for row in engine["per_query"] if ideal.get(row["query_id"])]
        assert engine["num_scored"] == len(scores) > 0
        assert engine["mean_ndcg"] == pytest.approx(sum(scores) / len(scores))
    assert report["engines"]["ultimate"]["mean_ndcg"] == pytest.approx(1.0)
    judged_results = [r for row in report["engines"]["exa"]["per_query"] for r in row["results"]]
    assert all(r["gates"]["integrity"] == "pass" for r in judged_results)
    # the judge's raw reply travels with each rating, for audit (issue 32 item 3)
    assert all('"rating"' in r["judge_reply"] for r in judged_results)
    # the pinned moment and the judge's "today" are recorded (issue 32 item 9)
    pinned = PINNED_NOW.isoformat()
    assert report["clock"] == {"pinned": pinned, "now": pinned, "judge_today": "2026-07-02"}
    assert {case["judge_today"] for case in report["cases"]} == {"2026-07-02"}
    assert all(undeclared_keys(case, "judged") == set() for case in report["cases"])
    assert search_env.requests["profile"] >= 4  # one per query (per worker at most)
    (detail,) = (tmp_path / "r1" / "reports").glob("*.cases.html")  # each case's results
    html = detail.with_name(detail.name.removesuffix(".cases.html") + ".html")
    assert detail.name in html.read_text() and "judge reasoning" in detail.read_text()
    judged = search_env.requests["judge"]

    second = run_evals(pytester, tmp_path / "r2", *args, module="")
    assert second.ret == first.ret
    assert search_env.requests["judge"] == judged  # every verdict came from the cache
    assert _report(tmp_path / "r2")["judge_requests"] == 0


def test_a_named_engine_without_its_key_is_a_usage_error(pytester, tmp_path, search_env,
                                                         monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    queries = tmp_path / "q.txt"
    queries.write_text("one query\n")
    result = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa,brave",
                       module="test_news.py")
    assert_usage_error(result, "--engines: brave needs BRAVE_API_KEY (*--skip-missing-keys*")
    assert search_env.requests["exa"] == 0
    opted = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa,brave",
                      "--skip-missing-keys", "-rs", module="test_news.py")
    opted.stdout.fnmatch_lines(["*brave: set BRAVE_API_KEY to evaluate this engine*"])
    # exa's best result for this query is rated 2 (MM), below "highly meets": a miss
    assert opted.parseoutcomes() == {"skipped": 1, "failed": 1}
    assert _report(tmp_path)["complete"] is False  # brave was never asked


def test_a_missing_judge_key_or_default_engine_key_is_a_usage_error(
        pytester, tmp_path, search_env, monkeypatch):
    """Not a run of SKIPs (the reason only under -rs) that evaluated nothing: exit 4 before
    any request, naming the variable; never advising --api-key, which is the model's."""
    queries = tmp_path / "q.txt"
    queries.write_text("one query\n")
    monkeypatch.setenv("OPENROUTER_API_KEY", "")
    judgeless = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa",
                          module="test_news.py")
    assert_usage_error(judgeless, "the judge of news: *no API key*OPENROUTER_API_KEY*"
                                  "--judge-model*")
    assert "--api-key" not in judgeless.stderr.str()
    monkeypatch.setenv("OPENROUTER_API_KEY", "fake-judge-key")
    monkeypatch.delenv("EXA_API_KEY")
    default = run_evals(pytester, tmp_path, "--queries", str(queries), module="test_news.py")
    assert_usage_error(default, "--engines (default keenable,exa): exa needs EXA_API_KEY "
                                "(*--skip-missing-keys*name the engines to run with --engines)")
    assert search_env.requests["exa"] == search_env.requests["judge"] == 0


def test_a_search_run_that_scored_nothing_does_not_pass(pytester, tmp_path, search_env,
                                                        monkeypatch):
    from needle_lib.continuous.runs import load_run
    from needle_lib.dashboard.search_pages import _run_status

    monkeypatch.delenv("EXA_API_KEY")
    queries = tmp_path / "q.txt"
    queries.write_text("one query\nanother\n")
    result = run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                       "--engines", "exa", "--skip-missing-keys", module="")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["news: no case was scored*evaluated nothing*"])
    report = _report(tmp_path)
    assert (report["complete"], report["scored_cases"]) == (False, 0)
    (path,) = (tmp_path / "search").glob("news__*.json")
    run = load_run(path)
    assert run.complete is False
    assert "nothing scored" in _run_status(run.complete, run.report["scored_cases"])


def test_failing_engine_is_an_error_and_counted(pytester, tmp_path, search_env, monkeypatch):
    monkeypatch.setenv("NEEDLE_BRAVE_BASE_URL", "http://127.0.0.1:9")  # nothing listens
    queries = tmp_path / "q.txt"
    queries.write_text("one query\nanother query\nthird query\n")
    result = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa,brave",
                       module="test_news.py")
    outcomes = result.parseoutcomes()
    assert outcomes["errors"] == 2 and outcomes["skipped"] == 1  # fail-fast after two
    brave = _report(tmp_path)["engines"]["brave"]
    assert brave["search_errors"] == 2 and brave["num_scored"] == 0 and brave["skipped"] == 1
    assert brave["mean_ndcg"] is None  # failures are never scored as zero
    # the failed, skipped and scored cases hold only declared fields (contract.records)
    assert all(undeclared_keys(case, "judged") == set() for case in _report(tmp_path)["cases"])


def test_without_queries_the_search_benchmarks_explain_how_to_run(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, module="test_news.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # nothing ran: not a green run
    result.stdout.fnmatch_lines(["no case ran. search benchmarks need a query set*--queries*"])
    assert not (tmp_path / "reports").exists()  # no report for a run that ran nothing


def test_malformed_gold_row_names_file_and_line(pytester, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"query_id": "a", "query": "ok"}\n{"query": "no id"}\n')
    result = run_evals(pytester, tmp_path, "--queries", str(gold), module="test_news.py")
    assert_usage_error(result, f"{gold}:2: row has no 'query_id'*")


def test_unknown_engine_is_named_with_the_known_ones(pytester, tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_text("one query\n")
    result = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa,nope",
                       module="test_news.py")
    assert_usage_error(result, "--engines: unknown engine(s) nope; known: keenable*brave*")


def test_parallel_search_runs_group_cases_by_engine(pytester, tmp_path, search_env):
    queries = tmp_path / "q.txt"
    queries.write_text("one query\nanother query\n")
    result = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa,brave",
                       "-n", "2", "-v", module="test_news.py")
    result.stdout.fnmatch_lines(["*scheduling tests via LoadGroupScheduling*"])
    explicit = run_evals(pytester, tmp_path / "explicit", "--queries", str(queries),
                         "--engines", "exa,brave", "-n", "2", "-v", "--dist", "load",
                         module="test_news.py")
    explicit.stdout.fnmatch_lines(["*scheduling tests via LoadScheduling*"])


def test_config_engine_runs_beside_builtin_ones(pytester, tmp_path, search_env):
    """configs/engines/searxng.toml, against a loopback SearXNG, in a news run with exa."""
    queries = tmp_path / "q.txt"
    queries.write_text("nvidia earnings\nfed rate decision\n")
    result = run_evals(pytester, tmp_path, "-k", "news", "--queries", str(queries),
                       "--engines", "searxng,exa", "-v", module="")
    result.stdout.fnmatch_lines(["*test_news*searxng*", "*needle news summary*", "*searxng*"])
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert search_env.requests["searxng"] == 2 and search_env.requests["exa"] == 2
    report = _report(tmp_path)
    searxng = report["engines"]["searxng"]
    assert searxng["search_errors"] == 0 and searxng["num_scored"] > 0
    results = [r for row in searxng["per_query"] for r in row["results"]]
    assert len(results) == 2 * 5  # SearXNG answers a page of 8; the top 5 are kept
    assert all(r["title"].startswith("SearXNG: ") and r["snippet"] for r in results)
    assert {"exa", "searxng", "ultimate"} <= set(report["engines"])


def test_the_judge_sees_the_evidence_budget_with_a_note_and_the_report_keeps_it_whole(
    pytester, tmp_path, search_env
):
    queries = tmp_path / "q.txt"
    queries.write_text("storm warning seattle\n")
    run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa",
              "--snippet-chars", "8", module="test_news.py")
    assert search_env.verdict_prompts
    assert all("more words" in p and "not shown]" in p for p in search_env.verdict_prompts)
    (row,) = _report(tmp_path)["engines"]["exa"]["per_query"]
    assert all(r["snippet"].startswith("snippet about https://") for r in row["results"])


def test_dump_is_recalls_and_a_search_report_goes_to_report(pytester, tmp_path, search_env):
    queries = tmp_path / "q.txt"
    queries.write_text("one query\n")
    mixed = run_evals(pytester, tmp_path / "mixed", "--corpus", "http_server", "--sample", "1",
                      "--queries", str(queries), "--engines", "exa",
                      "--dump", str(tmp_path / "out.json"), module="")
    assert_usage_error(mixed, "--dump names the recall dump; a search run writes its report "
                              "to --report PATH")
    assert not (tmp_path / "out.json").exists()
    report = tmp_path / "news-report.json"
    result = run_evals(pytester, tmp_path / "r", "--queries", str(queries), "--engines", "exa",
                       "--report", str(report), module="test_news.py")
    # The fake judge rates this query's best result 2 (MM): below "highly meets", a miss.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*best 2; relevant means ≥ 3*"])
    assert json.loads(report.read_text())["benchmark"] == "news"
