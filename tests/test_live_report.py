"""A search run's report scored while the run goes on (``benches.live_report``) is the report
its cases make: rebuilt from the written cases it is the same text, and it holds the same
rows and figures as the report the run's journal makes when read back."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from search_runs import START, header, judged_case, known_case

from needle_lib.benches.live_report import LiveReport
from needle_lib.benches.runfiles import SearchJournal, finish_run, read_run
from needle_lib.benches.tables import SpooledRows
from needle_lib.contract.report import SearchReport, report_fields
from needle_lib.jsonio import write_json_by_line_atomic
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_path

ENGINES = ["exa", "brave", "tavily"]


def news_cases(queries: int, seed: int) -> list[dict[str, Any]]:
    """Judged cases with the run's awkward parts: a failed search, a failed judgement, a
    skipped engine, a query every engine failed, URLs two engines share."""
    rng = random.Random(seed)
    cases = []
    for q in range(queries):
        qid, text = f"q{q}", f"news question {q}"
        for engine in ENGINES:
            if q == 1 and engine == "brave":
                cases.append(judged_case(qid, text, engine, [], search_error="HTTP 503"))
            elif q == 2:
                cases.append(judged_case(qid, text, engine, [], search_error="timeout"))
            elif q == 3 and engine == "tavily":
                cases.append({**judged_case(qid, text, engine, []), "outcome": "skipped"})
            else:
                ratings = [rng.choice([0, 1, 2, 3, 4]) for _ in range(3)]
                urls = [f"https://shared.example/{q}", *(f"https://{engine}.example/{q}/{i}"
                                                         for i in range(2))]
                case = judged_case(qid, text, engine, ratings, urls=urls,
                                   latency=0.1 + rng.random())
                if q == 4 and engine == "exa":
                    case["results"][-1].update(rating=None, label=None, reasoning=None)
                    case.update(judge_errors=1, outcome="error")
                cases.append(case)
    return cases


def finance_cases(queries: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = []
    for q in range(queries):
        for engine in ENGINES:
            if q == 1 and engine == "exa":
                cases.append(known_case(f"f{q}", f"company {q}", engine, None,
                                        search_error="HTTP 500"))
                continue
            rank = rng.choice([None, 1, 2, 3])
            cases.append(known_case(f"f{q}", f"company {q}", engine, rank,
                                    bucket="finance" if q % 2 else "filings",
                                    latency=0.2 + rng.random()))
    return cases


def run_head(bench: str, queries: int) -> dict[str, Any]:
    return header(bench, "judged" if bench == "news" else "known_item", ENGINES, queries,
                  START)


def live_run(path: Path, head: dict[str, Any], cases: list[dict[str, Any]], *,
             complete_run: bool = True) -> SearchReport:
    live = LiveReport(path, head)
    for case in cases:
        live.append(case)
    return live.finish(path, complete_run=complete_run)


def shuffled(cases: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The order an xdist or lookahead run settles cases in."""
    order = list(cases)
    random.Random(seed).shuffle(order)
    return order


def rows(report: dict[str, Any]) -> dict[str, list[Any]]:
    """Each engine's per-query rows, by query (row order is the order queries were scored)."""
    return {engine: sorted(figures["per_query"], key=lambda row: row["query_id"])
            for engine, figures in report["engines"].items()}


def figures(report: dict[str, Any]) -> dict[str, Any]:
    engines = {engine: {k: v for k, v in f.items() if k != "per_query"}
               for engine, f in report["engines"].items()}
    return {**{k: v for k, v in report.items() if k != "cases"}, "engines": engines}


BENCHES = [("news", news_cases), ("finance", finance_cases)]


@pytest.mark.parametrize(("bench", "make"), BENCHES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_live_report_is_the_report_its_cases_make(tmp_path, bench, make, seed):
    """Rebuilt from its own written cases (as ``needle merge`` and ``needle publish`` do),
    the report is byte for byte the one the run wrote, in whatever order the cases came."""
    head = run_head(bench, 8)
    live = tmp_path / "live.json"
    live_run(live, head, shuffled(make(8, seed), seed))
    rebuilt = tmp_path / "rebuilt.json"
    finish_run(rebuilt, *read_run(live))
    assert live.read_bytes() == rebuilt.read_bytes()
    assert not journal_path(live).exists()


@pytest.mark.parametrize(("bench", "make"), BENCHES)
def test_a_live_report_scores_as_the_journal_read_back_does(tmp_path, bench, make):
    """Same figures and same rows as the report built from the journal at the end (the way
    every run's report was built before), the cases in another order."""
    head = run_head(bench, 8)
    cases = shuffled(make(8, 7), 7)
    live_run(tmp_path / "live.json", head, cases)
    report = json.loads((tmp_path / "live.json").read_text())
    journal = SearchJournal(journal_path(tmp_path / "journal.json"), head)
    for case in cases:
        journal.append(case)
    from_journal = report_fields(journal.finish(tmp_path / "journal.json", complete_run=True))
    assert figures(report) == figures(from_journal)
    assert rows(report) == rows(from_journal)
    key = ("query_id", "engine")
    assert sorted(report["cases"], key=lambda c: [c[k] for k in key]) == \
        sorted(from_journal["cases"], key=lambda c: [c[k] for k in key])


def test_a_query_scored_before_a_case_of_it_comes_again_is_rebuilt_from_the_journal(tmp_path):
    """A case run twice (its query already scored): the later case wins, as in a journal read
    back, and the report is that one exactly."""
    head = run_head("news", 4)
    cases = news_cases(4, 5)
    again = {**cases[0], "results": [], "search_error": "HTTP 502", "outcome": "error"}
    live = tmp_path / "live.json"
    live_run(live, head, [*cases, again])
    expected = tmp_path / "expected.json"
    journal = SearchJournal(journal_path(expected), head)
    for case in [*cases, again]:
        journal.append(case)
    journal.finish(expected, complete_run=True)
    assert live.read_bytes() == expected.read_bytes()
    assert json.loads(live.read_text())["engines"]["exa"]["search_errors"] == 2


def test_queries_left_open_are_scored_at_the_end_and_the_run_says_so(tmp_path):
    """An interrupted run (some engines never answered some queries): those queries are
    scored with the answers they have, the report is not complete, and nothing is left
    behind but the report."""
    head = run_head("news", 6)
    cases = [c for c in news_cases(6, 3)
             if not (c["query_id"] >= "q3" and c["engine"] == "tavily")]
    live = tmp_path / "live.json"
    summary = live_run(live, head, cases, complete_run=False)
    report = json.loads(live.read_text())
    assert report["complete"] is False and summary.complete is False
    assert len(report["cases"]) == len(cases)
    assert {row["query_id"] for row in report["engines"]["exa"]["per_query"]} == \
        {f"q{q}" for q in range(6)}
    assert [p.name for p in tmp_path.iterdir()] == ["live.json"]
    rebuilt = tmp_path / "rebuilt.json"
    finish_run(rebuilt, *read_run(live), complete_run=False)
    assert live.read_bytes() == rebuilt.read_bytes()


def test_the_summary_is_the_report_without_rows_or_cases(tmp_path):
    head = run_head("finance", 4)
    summary = live_run(tmp_path / "live.json", head, finance_cases(4, 2))
    report = json.loads((tmp_path / "live.json").read_text())
    assert summary.cases is None
    assert all(figures.per_query == [] for figures in summary.engines.values())
    assert figures(report_fields(summary)) == figures(report)
    assert summary.scored_cases == report["scored_cases"] > 0


def test_a_killed_run_leaves_its_journal_whole(tmp_path):
    """The journal is still the record a kill leaves: every case appended so far, a line
    each, whatever was scored."""
    head = run_head("news", 4)
    cases = news_cases(4, 9)
    live = LiveReport(tmp_path / "run.json", head)
    for case in cases[:7]:
        live.append(case)
    journal = tmp_path / f"run{JOURNAL_SUFFIX}"
    assert read_run(journal) == (head, cases[:7])


def test_spooled_rows_are_written_as_the_list_they_stand_for(tmp_path):
    """``jsonio`` writes a spooled table, at the top level and inside an object, as the same
    text as the list of its rows, snippets with line separators and all."""
    table = [{"url": "https://a.example/1", "snippet": "line\u2028sep\nand \"quotes\" é"},
             {"url": "https://b.example/2", "rating": 3}]
    spooled, empty = SpooledRows(), SpooledRows()
    for row in table:
        spooled.append(row)
    plain, streamed = tmp_path / "plain.json", tmp_path / "spooled.json"
    write_json_by_line_atomic(plain, {"engines": {"exa": {"per_query": table}}, "cases": table,
                                      "empty": []})
    write_json_by_line_atomic(streamed, {"engines": {"exa": {"per_query": spooled}},
                                         "cases": spooled, "empty": empty})
    spooled.close()
    empty.close()
    assert streamed.read_bytes() == plain.read_bytes()
    assert json.loads(streamed.read_text())["cases"] == table
