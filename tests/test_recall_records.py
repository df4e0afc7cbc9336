"""The recall dump's declared records (``contract.records``, issue 33 step 1): what the
writers produce is what the TypedDicts declare, key for key; the readers' msgspec models
(``contract.schema``) declare the same keys with the same types; and a dump written by
main before the records were declared still folds to the same bytes and rescores to the
same figures.

``tests/payloads/recall/http_server-written-by-main.json`` is a run of main (commit
1817463) on ``http_server`` against the ``mixed`` loopback fake (one case passed, five
failed), its corpus ``config`` path made relative to the repository.
"""

from __future__ import annotations

import json
import shutil
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, is_typeddict

import msgspec
import pytest

from needle_lib.commands.status import dump_state
from needle_lib.contract import records, schema
from needle_lib.contract.outcome import Outcome
from needle_lib.llm.protocol import ChatResult
from needle_lib.recall.corpus import ScoringPolicy
from needle_lib.recall.journal import fold
from needle_lib.recall.rescore import dump_corpus, policy_of, rescore_dump
from needle_lib.recall.results import answer_fields, score_fields, summarize, summary_key
from needle_lib.recall.score import score_answer
from needle_lib.recall.store import write_dump

GOLDEN = Path(__file__).parent / "payloads" / "recall" / "http_server-written-by-main.json"

#: What the records' aliases stand for at run time: ``jsonio.JSON`` is a recursive string
#: alias that neither ``typing`` nor msgspec resolves, so a JSON object is checked as a dict.
ALIASES = {"JSONObject": dict, "JSON": object}


def hints(record: type) -> dict[str, Any]:
    return typing.get_type_hints(record, localns=ALIASES, include_extras=True)


def _plain(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and ``NotRequired``."""
    while get_origin(tp) in (typing.Annotated, NotRequired):
        tp = get_args(tp)[0]
    return tp


def mismatches(value: Any, tp: Any, at: str = "$") -> list[str]:
    """Where ``value`` is not of the declared type ``tp``: every key of a TypedDict value
    declared, every required one present, every value of its type (recursively)."""
    tp = _plain(tp)
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin in (Union, types.UnionType):
        found = [mismatches(value, option, at) for option in get_args(tp)]
        return [] if any(not f for f in found) else min(found, key=len)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{at}: {value!r} not in {get_args(tp)}"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{at}: {type(value).__name__}, not a {tp.__name__}"]
        declared = hints(tp)
        required = {k for k, h in declared.items() if get_origin(h) is not NotRequired}
        out = [f"{at}.{k}: not declared in {tp.__name__}" for k in value if k not in declared]
        out += [f"{at}.{k}: missing ({tp.__name__})" for k in sorted(required - set(value))]
        for key, item in value.items():
            if key in declared:
                out += mismatches(item, declared[key], f"{at}.{key}")
        return out
    if origin is list:
        if not isinstance(value, list):
            return [f"{at}: {type(value).__name__}, not a list"]
        return [m for i, item in enumerate(value) for m in mismatches(item, get_args(tp)[0],
                                                                       f"{at}[{i}]")]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            return [f"{at}: {type(value).__name__}, not an object"]
        args = get_args(tp)
        return [m for k, item in value.items()
                for m in (mismatches(item, args[1], f"{at}.{k}") if args else [])]
    if tp is type(None):
        return [] if value is None else [f"{at}: {value!r}, not null"]
    if isinstance(tp, type) and issubclass(tp, Enum):  # a file holds the value
        return [] if value in {m.value for m in tp} else [f"{at}: {value!r}, not {tp.__name__}"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, tp)
    return [] if ok else [f"{at}: {value!r}, not {getattr(tp, '__name__', tp)}"]


@pytest.fixture
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_checker_catches_an_undeclared_key_a_missing_one_and_a_wrong_type(golden):
    """The check below can fail: each kind of drift is named with its path."""
    golden["cases"][0]["teardown_errror"] = "typo"
    del golden["summary"]["bonus"]
    golden["corpus"]["lines"] = "1319"
    golden["cases"][1]["composition"]["code"]["total"] = True
    assert mismatches(golden, records.RecallDump) == [
        "$.corpus.lines: '1319', not int",
        "$.cases[0].teardown_errror: not declared in RecallCaseRecord",
        "$.cases[1].composition.code.total: True, not int",
        "$.summary.bonus: missing (RecallSummary)",
    ]


def test_a_dump_written_by_main_is_what_the_records_declare(golden):
    assert mismatches(golden, records.RecallDump) == []
    header = {key: golden[key] for key in hints(records.RecallHeader) if key in golden}
    assert mismatches(header, records.RecallHeader) == []


def test_a_dump_written_by_main_folds_to_the_same_bytes(golden, tmp_path):
    """The writer keeps every key where it was: the journal's header and cases fold to the
    file main wrote, byte for byte."""
    header = {key: golden[key] for key in hints(records.RecallHeader) if key in golden}
    dump = fold(header, golden["cases"], in_progress=False)
    dump["stored_as"] = golden["stored_as"]
    write_dump(tmp_path / "d.json", dump)
    assert (tmp_path / "d.json").read_bytes() == GOLDEN.read_bytes()


def test_a_dump_written_by_main_rescores_and_reads_with_the_same_figures(golden, tmp_path):
    rescored, diffs = rescore_dump(golden, dump_corpus(golden), policy_of(golden))
    assert set(diffs) == {case["case_id"] for case in golden["cases"]}
    assert rescored["cases"] == golden["cases"]  # every score field, in the same order
    assert rescored["summary"] == golden["summary"]
    assert list(rescored["summary"]) == list(golden["summary"])
    assert rescored["rescored_from"] == golden["scoring"]
    assert mismatches(rescored, records.RecallDump) == []
    copy = shutil.copy(GOLDEN, tmp_path / "http_server__golden.json")
    assert dump_state(Path(copy))[0] == "complete"


def test_answer_and_score_fields_are_what_the_records_declare():
    result = ChatResult(content="x" * 70_000, reasoning="why", finish_reason="stop",
                        usage={"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 2}},
                        timings=None, latency_s=0.123456, model="m", attempts=1,
                        prompt_count=None, truncated_by_needle=False)
    fields = answer_fields(result)
    assert fields["answer_cut"] == {"response": 70_000}
    assert mismatches(fields, records.AnswerFields) == []
    score = score_answer("def f():\n    return 1\n", ["def f():", "    return 2"],
                         ["code", "code"], [], ScoringPolicy())
    scored = score_fields(score)
    assert mismatches(scored, records.ScoreFields) == []
    assert scored == {key: value for key, value in score.to_json().items()
                      if key in hints(records.ScoreFields)}
    # both are the case record's own fields, with its types
    case = hints(records.RecallCaseRecord)
    for part in (records.AnswerFields, records.ScoreFields):
        for key, tp in hints(part).items():
            assert _plain(tp) == _plain(case[key]) or _plain(case[key]) == _plain(tp) | None, key


def test_the_summary_has_the_declared_keys_in_order_and_every_outcome_count():
    summary = summarize([], 3)
    assert list(summary) == list(hints(records.RecallSummary))
    assert {summary_key(outcome) for outcome in Outcome} <= set(summary)
    assert mismatches(summary, records.RecallSummary) == []


#: (read model, the write-side record it reads): the reader relies on a subset of the keys.
READ_SIDE = {
    schema.Corpus: records.RecallCorpus,
    schema.ModelInfo: records.RecallModel,
    schema.SamplingInfo: records.Sampling,
    schema.Summary: records.RecallSummary,
    schema.RecallDump: records.RecallDump,
    **{case: records.RecallCaseRecord for case in get_args(schema.RecallCase)},
}


def _options(tp: Any) -> frozenset[Any]:
    """The types ``tp`` admits, each read model named by the record it reads, a list by its
    items' types; ``UnsetType`` (an optional field) left out."""
    tp = _plain(tp)
    options = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)
    found: set[Any] = set()
    for option in map(_plain, options):
        if get_origin(option) is list:
            found.add(("list", _options(get_args(option)[0])))
        elif option is not msgspec.UnsetType:
            found.add(READ_SIDE.get(option, option))
    return frozenset(found)


@pytest.mark.parametrize(("model", "record"), list(READ_SIDE.items()),
                         ids=lambda t: t.__name__)
def test_the_readers_models_declare_the_writers_keys_and_types(model, record):
    written = hints(record)
    for name, tp in typing.get_type_hints(model, include_extras=True).items():
        if name == "outcome":  # the tag of the case union
            continue
        assert name in written, f"{model.__name__}.{name} is not a key of {record.__name__}"
        read, write = _options(tp), _options(written[name])
        if record is records.RecallCaseRecord:
            write -= {type(None)}  # the outcome a case is tagged with says which are set
        # What the writer writes, the reader accepts (a float field takes an int); the
        # reader takes nothing else, but null where an older file may have it.
        assert write <= read | ({int} if float in read else set()), name
        assert read - {type(None)} <= write, name


def test_composition_scoring_and_shard_are_one_declaration():
    """The reader validates these with the writer's own TypedDicts."""
    read = typing.get_type_hints(schema.RecallDump)
    assert _options(read["scoring"]) == {records.ScoringRecord}
    assert _options(read["shard"]) == {records.ShardRecord}
    scored = typing.get_type_hints(schema.PassedRecallCase)
    assert scored["composition"] is records.Composition
    with pytest.raises(msgspec.ValidationError, match=r"missing required field `by`"):
        msgspec.convert({"index": 1, "count": 2, "case_ids": []}, records.ShardRecord)
