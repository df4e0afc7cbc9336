"""The search case records as declared types (``contract.records``): what a case holds, in
the order Needle has always written it, and the union a test hands the controller."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from search_runs import judged_case, known_case, undeclared_keys

from needle_lib.benches.known_item import KnownItemFold
from needle_lib.benches.run_reports import SearchReports
from needle_lib.benches.tables import MemoryTables
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import (
    JudgedRecord,
    judged_case_record,
    known_item_case,
    known_item_case_record,
    recall_case_record,
)
from needle_lib.plugin.scorecard import Scorecard, record_of
from needle_lib.tomlconf import ConfigError

#: The keys of a case before it is run, in the order every Needle so far wrote them
#: (``search_case_record(**bench_fields)`` before the cases were declared).
BLANK_KEYS = ["query_id", "query", "stratum", "engine", "results", "search_error",
              "judge_errors", "judge_requests", "latency_s", "retries", "outcome"]


def test_a_blank_case_keeps_the_key_order_files_have():
    judged = judged_case_record(query_id="q1", query="nvidia", stratum=None, engine="exa")
    assert list(judged) == BLANK_KEYS
    assert judged["judge_errors"] == judged["retries"] == 0 and judged["outcome"] is None
    known = known_item_case_record(query_id="q1", query="nvidia ceo", stratum="ceo",
                                   engine="exa", gold={"field": "ceo"}, gold_text="ceo: x",
                                   groups={"field": "ceo"})
    assert list(known) == [*BLANK_KEYS, "gold", "gold_text", "groups", "det_rank",
                           "hit_rank", "judged"]
    assert known["hit_rank"] is None and known["judged"] == 0


def test_the_suites_synthetic_cases_are_declared():
    """Every field the crafted runs put on a case is a declared one; the check fails on a
    field no record type names (it is what the end-to-end runs are checked with too)."""
    assert undeclared_keys(judged_case("q1", "a", "exa", [3, 1]), "judged") == set()
    assert undeclared_keys(known_case("q1", "a", "exa", 2), "known_item") == set()
    assert undeclared_keys({**known_case("q1", "a", "exa", 2), "ranking": 1},
                           "known_item") == {"ranking"}
    # a known-item field is not a judged case's
    assert undeclared_keys(known_case("q1", "a", "exa", 2), "judged") >= {"gold", "hit_rank"}


def test_a_case_of_another_bench_in_a_known_item_run_is_an_error_naming_it():
    judged = judged_case("q7", "fed rate", "brave", [2])
    with pytest.raises(ConfigError, match=r"case 'q7' on 'brave' has no 'hit_rank'"):
        known_item_case(judged)  # type: ignore[arg-type]  # a judged case, as a file has it
    fold = KnownItemFold({"bench": "finance", "engines": ["brave"], "num_results": 5},
                         group_names=(), group_orders={}, tables=MemoryTables())
    with pytest.raises(ConfigError, match="not a known-item case"):
        fold.add_query({"brave": judged})  # type: ignore[dict-item]
    known = known_case("q7", "fed rate", "brave", 1)
    assert known_item_case(known) is known  # type: ignore[arg-type]


def test_the_scorecard_attaches_the_record_the_benchmark_opened():
    item = SimpleNamespace(user_properties=[])
    scorecard = Scorecard(item)  # type: ignore[arg-type]  # only its properties
    with pytest.raises(RuntimeError, match="before a benchmark opened"):
        _ = scorecard.case
    case = judged_case_record(query_id="q1", query="nvidia", stratum=None, engine="exa")
    record = JudgedRecord(kind="judged", pair="news__q", header={"bench": "news"},  # type: ignore[typeddict-item]
                          case=case)
    scorecard.open(record)
    assert scorecard.case is case
    ((name, attached),) = item.user_properties
    assert name == "needle_record" and attached is record
    case["skip_reason"] = "fail-fast"  # filled in place: the report carries it
    report = SimpleNamespace(user_properties=item.user_properties)
    carried = record_of(report)  # type: ignore[arg-type]  # only its user properties
    assert carried is record and carried["case"]["skip_reason"] == "fail-fast"


def test_the_search_reports_refuse_a_recall_record(tmp_path):
    reports = SearchReports(tmp_path, None)
    recall = recall_case_record(function="f", case_id="c1", file="a.py", start_line=1,
                                signature="def f():", prompt_tokens_est=10)
    with pytest.raises(TypeError, match="a recall case filed with the search reports"):
        reports.add({"kind": "recall", "pair": "c__m", "header": {}, "case": recall},
                    Outcome.PASSED)
    assert reports.paths == {}  # nothing reserved, no journal opened
