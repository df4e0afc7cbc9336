"""End to end, offline: ``pytest evals -k finance`` against loopback engines with crafted
answers, with and without the judge backstop; serial and ``-n 2`` give the same report."""

from __future__ import annotations

import json

import pytest
from evalrun import case_labels, run_evals
from search_runs import undeclared_keys

from needle_lib.paths import REPO_ROOT
from needle_lib.report.case_page import SUFFIX
from needle_lib.testing.search_server import JUDGE_DOWN, JUDGE_YES, FakeSearchServer


def row(qid, text, field, field_type, value, *, bucket="finance", syntax="plain", tier="",
        freshness="static", aliases=()):
    return {"query_id": qid, "query_text": text, "query_source": "finance",
            "query_origin": json.dumps({"bucket": bucket, "syntax": syntax}),
            "gold": {"field": field, "field_type": field_type, "value": value,
                     "aliases": list(aliases), "freshness_window": freshness, "tier": tier}}


ROWS = [
    row("q-ceo", "nvidia ceo", "ceo", "person", "Jensen Huang", freshness="1y"),
    row("q-founded", "apple founded year", "founded_year", "year", 1976),
    row("q-ticker", "microsoft stock ticker symbol", "ticker", "exact_id", "MSFT"),
    row("q-ni", '"nvidia" q1 fiscal 2026 net income', "net_income", "money", 18775000000.0,
        bucket="filings", syntax="quoted", tier="mega", freshness="1y"),
]


def r(url, title, snippet=""):
    return {"url": url, "title": title, "snippet": snippet}


SCRIPT = {
    ("exa", "nvidia ceo"): [r("https://a.example/1", "NVIDIA"),
                            r("https://a.example/2", "Leadership", "CEO Jensen Huang")],
    ("brave", "nvidia ceo"): [r("https://b.example/1", "NVIDIA GPUs")],
    ("exa", "apple founded year"): [r("https://a.example/3", "Apple history",
                                      f"the company started out {JUDGE_YES}")],
    ("brave", "apple founded year"): 400,
    ("exa", "microsoft stock ticker symbol"): [r("https://a.example/4", "Microsoft")],
    ("brave", "microsoft stock ticker symbol"): [r("https://b.example/4", "Microsoft",
                                                   "Windows maker")],
    ("exa", '"nvidia" q1 fiscal 2026 net income'): [r("https://a.example/5", "NVIDIA Q1",
                                                      "net income of $18.78 billion")],
    ("brave", '"nvidia" q1 fiscal 2026 net income'): [r("https://b.example/5", "NVIDIA Q1",
                                                        "revenue of $44.1 billion")],
}


@pytest.fixture
def engines(monkeypatch, tmp_path):
    with FakeSearchServer(SCRIPT) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def write_gold(tmp_path, rows=ROWS):
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def report_of(results):
    (path,) = (results / "search").glob("finance__*.json")
    return json.loads(path.read_text())


def run(pytester, tmp_path, name, *extra):
    return run_evals(pytester, tmp_path / name, "--queries", str(write_gold(tmp_path)),
                     "--engines", "exa,brave", "-p", "no:randomly", *extra,
                     module="test_finance.py")


def test_crafted_answers_give_expected_hits_misses_and_breakdowns(pytester, tmp_path, engines):
    result = run(pytester, tmp_path, "serial")
    outcomes = result.parseoutcomes()
    assert (outcomes["passed"], outcomes["failed"], outcomes["errors"]) == (2, 5, 1)
    result.stdout.fnmatch_lines([
        "*gold: ceo = Jensen Huang*", "*'NVIDIA GPUs' https://b.example/1*",
        "*person 'Jensen Huang' not in title, snippet or URL*",
        "*needle finance summary*", "*recall@5*MRR@5*",
    ])
    report = report_of(tmp_path / "serial")
    exa, brave, ultimate = (report["engines"][n] for n in ("exa", "brave", "ultimate"))
    assert (exa["num_scored"], exa["recall_at_k"]) == (4, 0.5)
    assert exa["mrr_at_k"] == pytest.approx((1 / 2 + 1) / 4)
    assert (brave["num_scored"], brave["search_errors"], brave["recall_at_k"]) == (3, 1, 0.0)
    assert (exa["misses_system_specific"], exa["misses_universal"]) == (0, 2)
    assert (brave["misses_system_specific"], brave["misses_universal"]) == (2, 1)
    assert (ultimate["recall_at_k"], ultimate["num_scored"]) == (0.5, 4)
    assert exa["by_bucket"] == {"filings": {"n": 1, "recall_at_k": 1.0},
                                "finance": {"n": 3, "recall_at_k": 1 / 3}}
    assert list(exa["by_freshness"]) == ["1y", "static"]
    assert exa["by_tier"] == {"mega": {"n": 1, "recall_at_k": 1.0}}
    assert exa["by_syntax"]["quoted"] == {"n": 1, "recall_at_k": 1.0}
    hits = {row["query_id"]: row["hit_rank"] for row in exa["per_query"]}
    assert hits == {"q-ceo": 2, "q-founded": None, "q-ticker": None, "q-ni": 1}
    assert report["judged"] is False and exa["judged_results"] == 0
    assert report["complete"] is True and not list((tmp_path / "serial" / "search").glob(
        "*.partial.jsonl"))
    (html,) = (p for p in (tmp_path / "serial" / "reports").glob("*.html")
               if not p.name.endswith(SUFFIX))
    page = html.read_text()
    assert "gold: ceo = Jensen Huang" in page and "not in title, snippet or URL" in page


def test_parallel_run_gives_the_serial_report(pytester, tmp_path, engines):
    run(pytester, tmp_path, "serial")
    run(pytester, tmp_path, "parallel", "-n", "2")
    serial, parallel = report_of(tmp_path / "serial"), report_of(tmp_path / "parallel")
    for name in ("exa", "brave", "ultimate"):
        a, b = serial["engines"][name], parallel["engines"][name]
        for key in ("recall_at_k", "mrr_at_k", "num_scored", "search_errors", "by_field",
                    "misses_system_specific", "misses_universal"):
            assert a[key] == b[key], (name, key)
        ranks = sorted((row["query_id"], row["hit_rank"]) for row in a["per_query"])
        assert ranks == sorted((row["query_id"], row["hit_rank"]) for row in b["per_query"])


def test_judge_backstop_upgrades_a_miss_and_asks_only_above_the_first_hit(
    pytester, tmp_path, engines
):
    result = run(pytester, tmp_path, "judged", "--judge")
    assert result.parseoutcomes()["passed"] == 3
    report = report_of(tmp_path / "judged")
    exa = report["engines"]["exa"]
    hits = {row["query_id"]: (row["det_rank"], row["hit_rank"]) for row in exa["per_query"]}
    assert hits["q-founded"] == (None, 1)       # upgraded by the judge
    assert hits["q-ni"] == (1, 1)               # a rank-1 hit: nothing asked
    assert exa["judge_upgrades"] == 1 and report["judged"] is True
    assert all(undeclared_keys(case, "known_item") == set() for case in report["cases"])
    # judged: ceo rank 1 (above the hit at 2), founded 1, ticker 1 → 3; none for q-ni
    assert exa["judged_results"] == 3
    assert engines.requests["judge"] == 3 + 3   # + brave's three one-result misses
    again = run(pytester, tmp_path, "again", "--judge")
    assert again.parseoutcomes()["passed"] == 3
    assert engines.requests["judge"] == 6       # every verdict came from the cache


def test_an_undecided_miss_is_an_error_not_a_miss(pytester, tmp_path, engines):
    engines.scripted[("exa", "microsoft stock ticker symbol")] = [
        r("https://a.example/4", "Microsoft", f"no ticker here {JUDGE_DOWN}")]
    result = run(pytester, tmp_path, "down", "--judge", "-k", "q-ticker and exa")
    assert result.parseoutcomes()["errors"] == 1
    result.stdout.fnmatch_lines(["*judge failed on 1 of 1 result(s)*undecided*"])
    exa = report_of(tmp_path / "down")["engines"]["exa"]
    assert (exa["num_scored"], exa["judge_errors"], exa["recall_at_k"]) == (0, 1, None)


def test_malformed_gold_row_is_a_usage_error_naming_file_and_line(pytester, tmp_path,
                                                                  engines):
    rows = [*ROWS[:2], {**ROWS[2], "gold": {"field": "ticker", "value": "MSFT"}}]
    result = run_evals(pytester, tmp_path / "bad", "--queries", str(write_gold(tmp_path, rows)),
                       "--engines", "exa", module="test_finance.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *gold.jsonl:3: finance gold: gold has no field_type"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_file_without_finance_rows_runs_nothing_and_says_why(pytester, tmp_path, engines):
    queries = tmp_path / "news.txt"
    queries.write_text("storm warning seattle\n")
    result = run_evals(pytester, tmp_path / "none", "--queries", str(queries),
                       module="test_finance.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines([f"no case ran: {queries} has no rows for the selected*"])


SAMPLE = REPO_ROOT / "fixtures" / "gold" / "finance.sample.jsonl"


def test_generated_gold_runs_end_to_end(pytester, tmp_path, engines):
    """The committed sample is what ``needle finance generate`` writes from the loopback
    registries (tests/test_finance_generate.py checks that); run the bench on two of its
    rows with crafted engine answers."""
    rows = {json.loads(line)["query_id"]: json.loads(line) for line in SAMPLE.open()}
    ceo = rows["34efa54d3e469f31_2026-07-02T14"]
    filing = rows["d78163409b9603c7_2026-07-02T14"]
    edgar = ("https://www.sec.gov/Archives/edgar/data/1000008/000100000826000047/"
             "hlx-8k.htm")
    engines.scripted.update({
        ("exa", ceo["query_text"]): [r("https://acme.example/team", "Leadership",
                                       "Chief executive Dana Whitfield")],
        ("brave", ceo["query_text"]): [r("https://news.example/acme", "Acme", "robots")],
        ("exa", filing["query_text"]): [r("https://news.example/helix", "Helix trial", "")],
        ("brave", filing["query_text"]): [r("https://news.example/x", "Helix", ""),
                                          r(edgar, "8-K", "Current report")],
    })
    labels = [case_labels(SAMPLE)[row["query_id"]] for row in (ceo, filing)]
    result = run_evals(pytester, tmp_path / "sample", "--queries", str(SAMPLE),
                       "--engines", "exa,brave", "-k", f"{labels[0]} or {labels[1]}",
                       module="test_finance.py")
    assert result.parseoutcomes()["passed"] == 2
    report = report_of(tmp_path / "sample")
    assert report["queries"]["count"] == len(rows)
    ranks = {name: {row["query_id"][:8]: row["hit_rank"]
                    for row in report["engines"][name]["per_query"]}
             for name in ("exa", "brave", "ultimate")}
    assert ranks == {"exa": {"34efa54d": 1, "d7816340": None},
                     "brave": {"34efa54d": None, "d7816340": 2},
                     "ultimate": {"34efa54d": 1, "d7816340": 1}}
    assert report["engines"]["exa"]["by_bucket"] == {
        "filingdoc": {"n": 1, "recall_at_k": 0.0}, "finance": {"n": 1, "recall_at_k": 1.0}}
    assert report["engines"]["brave"]["mrr_at_k"] == pytest.approx(0.25)
    assert report["engines"]["ultimate"]["misses_universal"] == 0


def test_shards_merge_into_the_single_machine_report(pytester, tmp_path, engines):
    from needle_lib.cli import main

    run(pytester, tmp_path, "whole")
    for index in (1, 2):
        run(pytester, tmp_path, "parts", "--shard", f"{index}/2")
    parts = sorted((tmp_path / "parts" / "search").glob("finance__*.shard-*-of-2.json"))
    assert len(parts) == 2
    sizes = [len(json.loads(p.read_text())["cases"]) for p in parts]
    assert sum(sizes) == 8 and min(sizes) > 0
    out = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--out", str(out)]) == 0
    merged, whole = json.loads(out.read_text()), report_of(tmp_path / "whole")
    for name in ("exa", "brave", "ultimate"):
        a, b = merged["engines"][name], whole["engines"][name]
        for key in ("recall_at_k", "mrr_at_k", "num_scored", "search_errors", "by_bucket",
                    "misses_system_specific", "misses_universal"):
            assert a[key] == b[key], (name, key)
