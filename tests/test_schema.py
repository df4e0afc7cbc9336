"""The result files' schema (``contract.schema``, issue 33 item 1): one reader per file kind
decodes, migrates an older version and validates; a file that does not validate is one
``SchemaError`` naming the file (and line) and the field path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_search_merge import CASES, header

from needle_lib.benches.runfiles import finish_run, read_run
from needle_lib.contract import schema
from needle_lib.contract.schema import (
    SchemaError,
    read_recall_dump,
    read_search_journal,
    read_search_report,
)
from needle_lib.errors import UsageError
from needle_lib.tomlconf import ConfigError

SCORE = {"matched": 3, "scored": 4, "hallucinated": 0, "reindented": 0, "bonus": 0,
         "composition": {"code": {"matched": 3, "total": 4}, "prose": {"matched": 0, "total": 0},
                         "blank_skipped": 1}}


def recall_dump(**top: Any) -> dict[str, Any]:
    cases = [
        {"case_id": "a1", "function": "f", "start_line": 3, "outcome": "passed",
         "response": "x", **copy.deepcopy(SCORE)},
        {"case_id": "b2", "function": "g", "start_line": 9, "outcome": "error",
         "error": "boom", "matched": None},
        {"case_id": "c3", "function": "h", "start_line": 12, "outcome": "skipped"},
    ]
    return {"schema_version": 2, "benchmark": "recall", "in_progress": False, "complete": True,
            "valid": True, "corpus": {"name": "jquery", "sha256": "abc"},
            "model": {"key": "m"}, "scoring": {"count_comments": True, "relax_indent": False},
            "summary": {"matched_pct": 75}, "cases": cases, **top}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def journal(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_one_error_type_for_every_kind_a_usage_error():
    assert issubclass(SchemaError, UsageError) and issubclass(SchemaError, ConfigError)


def test_a_valid_recall_dump_reads_with_every_key_kept(tmp_path):
    dump = recall_dump(future_field={"from": "a newer Needle"})  # unknown keys are allowed
    assert read_recall_dump(write(tmp_path / "d.json", dump)) == dump


def test_a_valid_search_report_and_journal_read(tmp_path):
    report = tmp_path / "finance__gold-20260701-000000.json"
    finish_run(report, header(), CASES)
    head, cases = read_search_report(report)
    assert (head, cases) == (header(), CASES) == read_run(report)
    lines = [{"header": header()}, *({"case": case} for case in CASES)]
    path = journal(tmp_path / "run.partial.jsonl", lines)
    assert read_search_journal(path) == (header(), CASES) == read_run(path)


@pytest.mark.parametrize(("damage", "message"), [
    (lambda d: d["cases"][0].update(matched="3"),
     r"d\.json: Expected `int`, got `str` - at `\$\.cases\[0\]\.matched` \(case 'a1'\)"),
    (lambda d: d["cases"][0]["composition"]["code"].pop("total"),
     r"d\.json: Object missing required field `total` - at "
     r"`\$\.cases\[0\]\.composition\.code` \(case 'a1'\)"),
    (lambda d: d["cases"][2].update(outcome="exploded"),
     r"d\.json: Invalid value 'exploded' - at `\$\.cases\[2\]\.outcome` \(case 'c3'\)"),
    (lambda d: d.update(valid=1), r"d\.json: Expected `bool`, got `int` - at `\$\.valid`"),
    (lambda d: d["summary"].update(matched_pct="75%"),
     r"Expected `float \| null`, got `str` - at `\$\.summary\.matched_pct`"),
])
def test_a_wrong_field_of_a_dump_names_file_and_path(tmp_path, damage, message):
    dump = recall_dump()
    damage(dump)
    with pytest.raises(SchemaError, match=message):
        read_recall_dump(write(tmp_path / "d.json", dump))


def test_an_unscored_case_needs_no_score(tmp_path):
    """The outcome decides what a case must hold: an error or a skip has no score."""
    dump = recall_dump()
    assert "composition" not in dump["cases"][1]
    read_recall_dump(write(tmp_path / "d.json", dump))


def test_a_wrong_field_of_a_search_run_names_file_line_and_path(tmp_path):
    bad = {**CASES[1], "results": [{"url": "u", "rating": "HM"}]}
    report = tmp_path / "r.json"
    finish_run(report, header(), CASES)
    data = json.loads(report.read_text(encoding="utf-8"))
    data["cases"][1] = bad
    with pytest.raises(SchemaError, match=r"r\.json: Expected `int \| null`, got `str` - at "
                                          r"`\$\.cases\[1\]\.results\[0\]\.rating` \(case '"):
        read_run(write(report, data))
    path = journal(tmp_path / "r.partial.jsonl",
                   [{"header": header()}, {"case": CASES[0]}, {"case": bad}])
    with pytest.raises(SchemaError, match=r"r\.partial\.jsonl:3: Expected `int \| null`, got "
                                          r"`str` - at `\$\.case\.results\[0\]\.rating` "
                                          rf"\(case '{bad['query_id']}'\)"):
        read_run(path)
    path = journal(path, [{"header": {**header(), "num_results": 2.5}}])
    with pytest.raises(SchemaError, match=r":1: Expected `int`, got `float` - at "
                                          r"`\$\.header\.num_results`"):
        read_run(path)


def test_a_journal_line_of_another_kind_is_left_alone(tmp_path):
    """Forward compatible: a newer Needle may write lines of its own (as today's reader)."""
    lines = [{"header": header()}, {"note": "resumed"}, {"case": CASES[0]}]
    assert read_run(journal(tmp_path / "r.partial.jsonl", lines)) == (header(), CASES[:1])


def test_a_tampered_bench_name_is_refused(tmp_path):
    path = journal(tmp_path / "r.partial.jsonl", [{"header": header(bench="../x")}])
    with pytest.raises(SchemaError, match=r"header\.bench '\.\./x' is not a plain name"):
        read_run(path)


def test_a_journal_cut_by_a_kill_forgives_only_its_last_line(tmp_path):
    lines = [{"header": header()}, *({"case": case} for case in CASES[:3])]
    path = journal(tmp_path / "r.partial.jsonl", lines)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"case": {"query_id": "q9", "eng')  # the case in flight
    assert read_run(path) == (header(), CASES[:3])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps({"case": CASES[3]}) + "\n")
    with pytest.raises(SchemaError, match=r"r\.partial\.jsonl:5: not JSON"):
        read_run(path)


@pytest.fixture
def version_two(monkeypatch: pytest.MonkeyPatch):
    """A search run format 2 in which a case's ``qid`` became ``query_id`` (and a recall
    dump format 3 in which ``ok`` became ``valid``): no such step exists yet, so the test
    registers one, as the first real format change will."""
    calls: list[str] = []

    def search_1_to_2(entry: dict[str, Any]) -> dict[str, Any]:
        calls.append("search")
        if "case" in entry:
            case = dict(entry["case"])
            case["query_id"] = case.pop("qid")
            return {"case": case}
        return entry

    def recall_2_to_3(dump: dict[str, Any]) -> dict[str, Any]:
        calls.append("recall")
        dump = dict(dump)
        dump["valid"] = dump.pop("ok")
        return dump

    monkeypatch.setattr(schema, "SEARCH_RUN_SCHEMA_VERSION", 2)
    monkeypatch.setattr(schema, "RECALL_DUMP_SCHEMA_VERSION", 3)
    monkeypatch.setitem(schema.CURRENT_VERSION, "search run", 2)
    monkeypatch.setitem(schema.CURRENT_VERSION, "recall dump", 3)
    monkeypatch.setitem(schema.MIGRATIONS, "search run", {1: search_1_to_2})
    monkeypatch.setitem(schema.MIGRATIONS, "recall dump", {2: recall_2_to_3})
    return calls


def _old(case: dict[str, Any]) -> dict[str, Any]:
    old = {k: v for k, v in case.items() if k != "query_id"}
    return {"qid": case["query_id"], **old}


def test_an_older_file_is_migrated_on_read(tmp_path, version_two):
    # a journal of version 1 (its header says none): every line goes through the step
    lines = [{"header": header()}, *({"case": _old(case)} for case in CASES)]
    head, cases = read_run(journal(tmp_path / "r.partial.jsonl", lines))
    assert [c["query_id"] for c in cases] == [c["query_id"] for c in CASES]
    assert head == header()
    # a report of version 1
    report = {"schema_version": 1, "header": header(), "cases": [_old(c) for c in CASES]}
    assert read_run(write(tmp_path / "r.json", report))[1] == CASES
    # a recall dump of version 2
    dump = recall_dump()
    dump["ok"] = dump.pop("valid")
    assert read_recall_dump(write(tmp_path / "d.json", dump))["valid"] is True
    assert set(version_two) == {"search", "recall"}


def test_a_current_file_skips_the_migration(tmp_path, version_two):
    report = {"schema_version": 2, "header": {**header(), "schema_version": 2},
              "cases": CASES}
    assert read_run(write(tmp_path / "r.json", report))[1] == CASES
    read_recall_dump(write(tmp_path / "d.json", recall_dump(schema_version=3)))
    assert version_two == []


def test_a_version_without_a_migration_is_named(tmp_path, version_two):
    with pytest.raises(SchemaError, match=r"d\.json: schema_version 1 is older than any"):
        read_recall_dump(write(tmp_path / "d.json", recall_dump(schema_version=1)))
    with pytest.raises(SchemaError, match=r"schema_version should be an integer"):
        read_recall_dump(write(tmp_path / "d.json", recall_dump(schema_version="2")))


def test_the_models_document_their_fields():
    (_, components) = msgspec.json.schema_components([schema.RecallDump, schema.SearchCase])
    assert components["RecallDump"]["properties"]["valid"]["description"]
    assert components["SearchCase"]["properties"]["results"]["description"]


def test_a_line_cut_inside_a_character_is_forgiven_too(tmp_path):
    path = journal(tmp_path / "r.partial.jsonl", [{"header": header()}, {"case": CASES[0]}])
    with path.open("ab") as fh:
        fh.write('{"case": {"query": "caf\u00e9'.encode()[:-1])  # half of "é"
    assert read_run(path) == (header(), CASES[:1])


def test_non_finite_numbers_read_as_json_wrote_them(tmp_path):
    """json.dumps writes NaN for a non-finite float; msgspec refuses it, the reader not."""
    case = {**CASES[0], "latency_s": float("nan")}
    path = journal(tmp_path / "r.partial.jsonl", [{"header": header()}, {"case": case}])
    assert read_run(path)[1][0]["latency_s"] != read_run(path)[1][0]["latency_s"]  # NaN
    report = tmp_path / "r.json"
    finish_run(report, header(), [{**c, "latency_s": float("inf")} for c in CASES])
    assert read_run(report)[1][0]["latency_s"] == float("inf")


def test_a_header_written_before_engine_modes_reads_as_the_default_mode(tmp_path):
    """Migrated on read: a run of tavily or google said no mode, and ran in the default; a
    run of neither comes back as it was, so its file writes back to the same bytes."""
    tavily = [{**c, "engine": "tavily" if c["engine"] == "brave" else c["engine"]}
              for c in CASES]
    old = header(engines=["exa", "tavily"])
    report = tmp_path / "finance__gold-20260701-000000.json"
    finish_run(report, old, tavily)
    assert "engine_modes" not in json.loads(report.read_text())["header"]
    path = journal(tmp_path / "run.partial.jsonl",
                   [{"header": old}, *({"case": c} for c in tavily)])
    for read in (read_search_report(report), read_search_journal(path)):
        assert read[0] == {**old, "engine_modes": {"tavily": "basic"}}
    recorded = header(engines=["exa", "tavily"], engine_modes={"tavily": "advanced"})
    path = journal(path, [{"header": recorded}])
    assert read_search_journal(path)[0] == recorded  # a recorded mode is kept
    assert read_search_journal(journal(path, [{"header": header()}]))[0] == header()


def test_a_malformed_engine_modes_names_the_field(tmp_path):
    path = journal(tmp_path / "r.partial.jsonl",
                   [{"header": header(engine_modes={"tavily": 2})}])
    with pytest.raises(SchemaError, match=r":1: Expected `str`, got `int` - at "
                                          r"`\$\.header\.engine_modes\[\.\.\.\]`"):
        read_run(path)
