"""The judged report's query-wide rules: an incomplete pool scores nobody, a query every
engine failed is marked on ``ultimate``, and a report without engines has no ``ultimate``."""

from __future__ import annotations

from typing import Any

from search_runs import START, header, judged_case

from needle_lib.benches.registry import build_report
from needle_lib.contract.report import report_fields


def _report(engines: list[str], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The report as its file holds it."""
    return report_fields(build_report(header("news", "judged", engines, 2, START), cases,
                                      in_progress=False))


def _unjudged(case: dict[str, Any]) -> dict[str, Any]:
    """``case`` with its last result's judgement failed, as the search fixture records it."""
    case["results"][-1].update(rating=None, label=None, reasoning=None)
    return {**case, "judge_errors": 1, "outcome": "error"}


def test_a_judge_error_in_one_engine_leaves_the_query_out_for_every_engine() -> None:
    """Engine a's 2-rated page against a pool missing b's unjudged page would score 1.0."""
    cases = [judged_case("q1", "query one", "a", [2]),
             _unjudged(judged_case("q1", "query one", "b", [4, 1])),
             judged_case("q2", "query two", "a", [4]),
             judged_case("q2", "query two", "b", [0])]
    engines = _report(["a", "b"], cases)["engines"]
    a_rows = {row["query_id"]: row for row in engines["a"]["per_query"]}
    assert a_rows["q1"]["ndcg"] is None and a_rows["q1"]["pool_incomplete"]
    assert (engines["a"]["num_scored"], engines["a"]["mean_ndcg"]) == (1, 1.0)  # q2 only
    assert engines["b"]["judge_errors"] == 1
    assert engines["ultimate"]["judge_errors"] == 1
    assert engines["ultimate"]["num_scored"] == 1


def test_a_query_every_engine_failed_is_marked_counted_and_kept_out_of_the_means() -> None:
    cases = [judged_case("q1", "query one", "a", [], search_error="a: HTTP 503"),
             judged_case("q1", "query one", "b", [], search_error="b: timed out"),
             judged_case("q2", "query two", "a", [4]),
             judged_case("q2", "query two", "b", [0])]
    ultimate = _report(["a", "b"], cases)["engines"]["ultimate"]
    rows = {row["query_id"]: row for row in ultimate["per_query"]}
    assert rows["q1"]["search_error"] == "all engines failed" and rows["q1"]["ndcg"] is None
    assert (ultimate["search_errors"], ultimate["num_scored"]) == (1, 1)
    assert ultimate["mean_ndcg"] == 1.0


def test_skipped_engines_are_not_failures_of_the_query() -> None:
    skipped = {**judged_case("q1", "query one", "a", []), "outcome": "skipped"}
    ultimate = _report(["a"], [skipped])["engines"]["ultimate"]
    assert ultimate["search_errors"] == 0 and ultimate["per_query"] == []


def test_a_report_with_no_engines_has_no_ultimate() -> None:
    assert _report([], [])["engines"] == {}
