"""The known-item report on crafted cases: recall@K, MRR@K, errors left out of the means,
judge upgrades, system-specific vs universal misses, breakdowns and the pooled ultimate."""

from __future__ import annotations

from typing import Any

import pytest

from needle_lib.benches.known_item import KnownItemFold, combined_rank, needs_judging
from needle_lib.benches.registry import fold_report
from needle_lib.benches.tables import MemoryTables
from needle_lib.contract.report import report_fields

HEADER = {"bench": "finance", "engines": ["exa", "brave"], "num_results": 3,
          "snippet_chars": 2000, "expected_cases": 8}
GROUPS = ("field", "freshness")
ORDERS = {"freshness": ("1h", "1y", "static")}


def build_report(header: dict[str, Any], cases: list[dict[str, Any]], *,
                 group_names: tuple[str, ...], group_orders: dict[str, tuple[str, ...]],
                 in_progress: bool) -> dict[str, Any]:
    fold = KnownItemFold(header, group_names=group_names, group_orders=group_orders,
                         tables=MemoryTables())
    return report_fields(fold_report(fold, cases, in_progress=in_progress))


def case(qid, engine, hit_rank, *, det_rank="same", outcome=None, search_error=None,
         field="ceo", freshness="1y", latency=0.5, retries=0, urls=("u1", "u2", "u3")):
    det = hit_rank if det_rank == "same" else det_rank
    results = [{"url": f"https://{engine}.example/{qid}/{u}", "title": u, "snippet": "",
                "det_match": det == i + 1, "judge_match": None} for i, u in enumerate(urls)]
    if search_error:
        results = []
    return {"query_id": qid, "query": f"query {qid}", "engine": engine, "gold": {},
            "groups": {"field": field, "freshness": freshness}, "results": results,
            "hit_rank": hit_rank, "det_rank": det, "judged": 0, "judge_errors": 0,
            "search_error": search_error, "latency_s": latency, "retries": retries,
            "outcome": outcome or ("error" if search_error else
                                   "passed" if hit_rank else "failed")}


CASES = [
    case("q1", "exa", 1), case("q1", "brave", 2),
    case("q2", "exa", None), case("q2", "brave", 3, det_rank=None, field="founded_year",
                                  freshness="static"),
    case("q3", "exa", None, field="founded_year", freshness="static"),
    case("q3", "brave", None, field="founded_year", freshness="static"),
    case("q4", "exa", 2, retries=2), case("q4", "brave", None, search_error="brave: HTTP 503"),
]


@pytest.fixture
def report():
    return build_report(HEADER, CASES, group_names=GROUPS, group_orders=ORDERS,
                        in_progress=False)


def test_recall_and_mrr_leave_search_errors_out(report):
    exa, brave = report["engines"]["exa"], report["engines"]["brave"]
    assert (exa["num_scored"], exa["recall_at_k"]) == (4, 0.5)
    assert exa["mrr_at_k"] == pytest.approx((1 + 1 / 2) / 4)
    assert (brave["num_scored"], brave["search_errors"]) == (3, 1)
    assert brave["recall_at_k"] == pytest.approx(2 / 3)
    assert brave["mrr_at_k"] == pytest.approx((1 / 2 + 1 / 3) / 3)
    assert exa["retries"] == 2


def test_judge_upgrades_are_counted(report):
    assert report["engines"]["brave"]["judge_upgrades"] == 1
    assert report["engines"]["exa"]["judge_upgrades"] == 0


def test_misses_split_into_system_specific_and_universal(report):
    exa, brave = report["engines"]["exa"], report["engines"]["brave"]
    assert (exa["misses_system_specific"], exa["misses_universal"]) == (1, 1)  # q2 / q3
    assert (brave["misses_system_specific"], brave["misses_universal"]) == (0, 1)  # q3


def test_ultimate_pools_the_engines_that_answered(report):
    ultimate = report["engines"]["ultimate"]
    assert (ultimate["num_scored"], ultimate["recall_at_k"], ultimate["mrr_at_k"]) == \
        (4, 0.75, None)
    assert ultimate["latency"] is None
    assert (ultimate["misses_system_specific"], ultimate["misses_universal"]) == (0, 1)
    rows = {row["query_id"]: row for row in ultimate["per_query"]}
    # q2: brave's hit (rank 3 for brave) comes first, then the other pooled results
    first = rows["q2"]["results"][0]
    assert first["url"] == "https://brave.example/q2/u3" and first["engine"] == "brave"
    assert len(rows["q2"]["results"]) == HEADER["num_results"]
    assert rows["q1"]["results"][0]["engine"] == "exa"  # first engine in --engines order
    assert rows["q4"]["hit_rank"] == 1  # brave failed; exa alone makes the pool


def test_breakdowns_by_group_in_ladder_order(report):
    exa = report["engines"]["exa"]
    assert list(exa["by_freshness"]) == ["1y", "static"]
    assert exa["by_field"] == {"ceo": {"n": 3, "recall_at_k": 2 / 3},
                               "founded_year": {"n": 1, "recall_at_k": 0.0}}


def test_report_shape(report):
    assert report["kind"] == "known_item" and report["num_queries"] == 4 and report["k"] == 3
    assert list(report["engines"]) == ["exa", "brave", "ultimate"]
    per_query = report["engines"]["brave"]["per_query"]
    assert [row["score"] for row in per_query] == [1.0, 1.0, 0.0, None]


def test_an_engine_that_failed_everywhere_has_no_means():
    cases = [case("q1", "exa", None, search_error="exa: down"), case("q1", "brave", 1)]
    report = build_report(HEADER, cases, group_names=GROUPS, group_orders=ORDERS,
                          in_progress=False)
    assert report["engines"]["exa"]["recall_at_k"] is None
    assert report["engines"]["exa"]["num_scored"] == 0
    assert report["engines"]["ultimate"]["recall_at_k"] == 1.0


def test_fail_fast_skips_are_not_pooled_search_errors():
    """2 errors, then fail-fast skips every remaining case: ``ultimate`` counts 2, not 2 + skips."""
    skipped = dict(search_error="fail-fast: 2 consecutive errors", outcome="skipped")
    cases = [case("q1", "exa", None, search_error="exa: down"),
             case("q2", "exa", None, search_error="exa: down"),
             *(case(f"q{n}", "exa", None, **skipped) for n in range(3, 9))]
    report = build_report({**HEADER, "engines": ["exa"]}, cases, group_names=GROUPS,
                          group_orders=ORDERS, in_progress=False)
    for name in ("exa", "ultimate"):
        engine = report["engines"][name]
        assert (engine["search_errors"], engine["skipped"]) == (2, 6), name


@pytest.mark.parametrize("det, judge, expected", [
    (None, [False, True, False], 2),     # the judge finds a hit the matcher missed
    (3, [False, True], 2),               # an earlier hit
    (2, [False], 2),                     # nothing earlier: the matcher's hit stands
    (1, [], 1),                          # a hit is never revoked (and nothing was asked)
    (None, [False, False], None),
])
def test_the_backstop_upgrades_and_never_revokes(det, judge, expected):
    assert combined_rank(det, judge) == expected


def test_only_results_above_the_first_hit_are_judged():
    assert needs_judging(None, 5) == 5
    assert needs_judging(3, 5) == 2
    assert needs_judging(1, 5) == 0


def test_ultimate_lists_one_page_once_however_engines_spell_it():
    """Bing's ``msockid`` and an escaped path are one page with the other engine's URL."""
    exa = case("q1", "exa", 1, urls=("u1", "u2"))
    brave = case("q1", "brave", None, urls=("u1", "u2"))
    exa["results"][1]["url"] = "https://news.example/caf%C3%A9"
    brave["results"][0]["url"] = "https://www.news.example/café?msockid=2a1b"
    report = build_report(HEADER, [exa, brave], group_names=GROUPS, group_orders=ORDERS,
                          in_progress=False)
    urls = [r["url"] for r in report["engines"]["ultimate"]["per_query"][0]["results"]]
    assert urls == [exa["results"][0]["url"], exa["results"][1]["url"],
                    brave["results"][1]["url"]]


def test_a_known_item_report_with_no_engines_has_no_ultimate():
    head = {**HEADER, "engines": [], "expected_cases": 0}
    report = build_report(head, [], group_names=GROUPS, group_orders=ORDERS, in_progress=False)
    assert report["engines"] == {}


def test_engines_all_skipped_are_no_search_error_of_ultimate():
    cases = [case("q1", "exa", None, outcome="skipped"), case("q1", "brave", None,
                                                             outcome="skipped")]
    report = build_report(HEADER, cases, group_names=GROUPS, group_orders=ORDERS,
                          in_progress=False)
    assert report["engines"]["ultimate"]["search_errors"] == 0
    assert report["engines"]["ultimate"]["skipped"] == 1
