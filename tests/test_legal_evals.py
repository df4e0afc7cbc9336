"""End to end, offline: generate legal gold from the loopback sources, then run
``pytest evals -k legal`` against two loopback engines with crafted answers, and check the
hits per query and the ``by_suite``/``by_syntax``/``by_court`` breakdowns."""

from __future__ import annotations

import asyncio
import json

import pytest
from evalrun import case_labels, run_evals
from test_search_resume import assert_resume_asks_only_the_unanswered

from needle_lib.benches.legal.generate import Options, generate
from needle_lib.benches.legal.sources import CourtListenerClient, EcfrClient
from needle_lib.benches.rows import write_rows
from needle_lib.llm import make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.search.operators import parse_query
from needle_lib.testing.legal_world import NOW, fake_sources
from needle_lib.testing.search_server import FakeSearchServer

OPTIONS = Options(now=NOW, courts=("scotus", "ca1", "ca9", "cafc"), per_court=4,
                  titles=(17, 35, 40), per_title=2, seed=7)


def r(url, title="A page", snippet=""):
    return {"url": url, "title": title, "snippet": snippet}


FILLER = r("https://news.example/law", "Court news", "Rulings this week")
#: case_key → (exa's results, brave's results or an HTTP status), and the hit rank expected.
ANSWERS = {
    "101": ([FILLER, r("https://www.courtlistener.com/opinion/101/fresh-mix/", "Fresh Mix")],
            [r("https://dockets.example/1", "Ninth Circuit order", "No. 25-2462")]),
    "201": ([r("https://a.example/loper", "Loper Bright", "603 U.S. 369 (2024)")],
            [r("https://supreme.justia.com/cases/federal/us/603/369/", "Loper Bright")]),
    "202": ([FILLER],
            [r("https://b.example/harrow", "Harrow v. Department of Defense", "No. 23-21")]),
    "103": ([FILLER], [FILLER]),
    "105": ([FILLER], [FILLER]),
    "106": ([FILLER], [r("https://b.example/timber", "Timber sales", "No. 25-1111")]),
    "301": ([FILLER], [r("https://b.example/ingenico", "Ingenico v. IOENGINE",
                         "Fed. Cir. No. 2023-1367")]),
    "17:240.10b-5": ([r("https://www.law.cornell.edu/cfr/text/17/240.10b-5", "Rule 10b-5")],
                     [r("https://c.example/fraud", "Fraud", "17 C.F.R. § 240.10b-5")]),
    "17:240.13a-1": (
        [r("https://www.ecfr.gov/current/title-17/section-240.13a-11", "Current reports")],
        [FILLER, FILLER,
         r("https://www.ecfr.gov/current/title-17/part-240/section-240.13a-1", "Annual")]),
    "40:60.1": ([FILLER], 500),
}
EXPECTED_RANKS = {
    "exa": {"101": 2, "201": 1, "202": None, "103": None, "105": None, "106": None,
            "301": None, "17:240.10b-5": 1, "17:240.13a-1": None, "40:60.1": None},
    "brave": {"101": None, "201": 1, "202": 1, "103": None, "105": None, "106": 1,
              "301": 1, "17:240.10b-5": 1, "17:240.13a-1": 3, "40:60.1": None},
}


async def no_sleep(_: float) -> None:
    return None


async def _generate(env):
    courtlistener = CourtListenerClient(env=env, sleep=no_sleep)
    ecfr = EcfrClient(env=env, sleep=no_sleep)
    llm = make_async_chat_client(generation_model_config(environ=env))
    try:
        return await generate(OPTIONS, courtlistener=courtlistener, ecfr=ecfr, llm=llm)
    finally:
        for client in (courtlistener, ecfr, llm):
            await client.aclose()


@pytest.fixture(scope="module")
def gold_rows():
    with fake_sources() as sources, pytest.MonkeyPatch.context() as patch:
        for key, value in sources.env().items():
            patch.setenv(key, value)
        return asyncio.run(_generate(sources.env()))


@pytest.fixture
def engines(gold_rows, monkeypatch, tmp_path):
    script = {}
    for row in gold_rows:
        exa, brave = ANSWERS[row["gold"]["case_key"]]
        parsed = parse_query(row["query_text"])
        script[("exa", parsed.text)] = exa
        script[("brave", parsed.text_with_sites())] = brave
    with FakeSearchServer(script) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def _expected_breakdown(rows, engine, group):
    cells: dict[str, list[int]] = {}
    for row in rows:
        key = row["gold"]["case_key"]
        if engine == "brave" and key == "40:60.1":
            continue                                      # a failed search is not scored
        value = {"suite": row["query_origin"]["suite"], "syntax": row["query_origin"]["syntax"],
                 "court": row["gold"].get("court", "")}[group]
        if value:
            cells.setdefault(value, []).append(1 if EXPECTED_RANKS[engine][key] else 0)
    return {k: {"n": len(v), "recall_at_k": sum(v) / len(v)} for k, v in cells.items()}


def test_generated_gold_runs_end_to_end_with_expected_hits_and_breakdowns(
        pytester, tmp_path, gold_rows, engines):
    assert {row["gold"]["case_key"] for row in gold_rows} == set(ANSWERS)
    gold = tmp_path / "legal.jsonl"
    write_rows(gold_rows, str(gold))
    result = run_evals(pytester, tmp_path / "results", "--queries", str(gold),
                       "--engines", "exa,brave", "-p", "no:randomly", "-v",
                       module="test_legal.py")
    outcomes = result.parseoutcomes()
    assert (outcomes["passed"], outcomes["failed"], outcomes["errors"]) == (9, 10, 1)
    by_key = {row["gold"]["case_key"]: row for row in gold_rows}
    fresh_id = case_labels(gold)[by_key["101"]["query_id"]]
    lines = result.stdout.str()
    assert f"test_legal[legal-{fresh_id}-exa] PASSED" in lines
    assert f"test_legal[legal-{fresh_id}-brave] FAILED" in lines
    result.stdout.fnmatch_lines([
        "*gold: Fresh Mix, LLC v. Pisanelli Bice PLLC (ca9): cluster 101; cites 89 F.4th 1188;"
        " docket 25-2462 with a party token (fresh, pisanelli, bice)*",
        "*docket 25-2462 but no party token (fresh, pisanelli, bice); found docket 25-2462*",
    ])

    (path,) = (tmp_path / "results" / "search").glob("legal__*.json")
    report = json.loads(path.read_text())
    assert report["k"] == 5                               # the bench's default top-K
    for engine in ("exa", "brave"):
        summary = report["engines"][engine]
        ranks = {by_id: row["hit_rank"] for by_id, row in
                 ((r["gold"]["case_key"], r) for r in summary["per_query"])}
        assert ranks == EXPECTED_RANKS[engine], engine
        for group in ("suite", "syntax", "court"):
            assert summary[f"by_{group}"] == _expected_breakdown(gold_rows, engine, group), \
                (engine, group)
    exa, brave, ultimate = (report["engines"][n] for n in ("exa", "brave", "ultimate"))
    assert (exa["num_scored"], exa["recall_at_k"]) == (10, 0.3)
    assert exa["mrr_at_k"] == pytest.approx((1 / 2 + 1 + 1) / 10)
    assert (brave["num_scored"], brave["search_errors"]) == (9, 1)
    assert brave["recall_at_k"] == pytest.approx(6 / 9)
    assert exa["by_suite"] == {"caselaw": {"n": 7, "recall_at_k": 2 / 7},
                               "code": {"n": 3, "recall_at_k": 1 / 3}}
    assert list(exa["by_court"]) == ["scotus", "ca9", "cafc"]   # bench order; no code rows
    assert (exa["misses_system_specific"], exa["misses_universal"]) == (4, 3)
    assert (brave["misses_system_specific"], brave["misses_universal"]) == (1, 2)
    assert (ultimate["recall_at_k"], ultimate["num_scored"]) == (0.7, 10)


def test_resume_searches_only_the_errored_case(pytester, tmp_path, gold_rows, engines):
    gold = tmp_path / "legal.jsonl"
    write_rows(gold_rows, str(gold))
    args = ("--queries", str(gold), "--engines", "exa,brave", "-p", "no:randomly")
    run_evals(pytester, tmp_path / "results", *args, module="test_legal.py")
    assert_resume_asks_only_the_unanswered(pytester, tmp_path / "results", "legal", engines,
                                           *args, module="test_legal.py")
