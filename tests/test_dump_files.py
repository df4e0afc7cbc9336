"""A structurally bad but valid-JSON results file is one clear error naming it, in every
reader (issue 20 item 12): ``--resume``, ``--dump``, ``--baseline``, ``needle rescore``,
``merge``, ``status`` and ``compare`` for recall dumps; ``merge`` for search reports and
journals. Before, each ended in its own KeyError or TypeError traceback."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from evalrun import assert_usage_error, record_run, run_evals
from test_recall_records import mismatches
from test_search_merge import CASES, header

from needle_lib.benches.runfiles import finish_run
from needle_lib.cli import main as needle
from needle_lib.commands.status import dump_state
from needle_lib.contract.records import RecallDump

PAIR = "http_server__reference"


def _first_case(dump: dict[str, Any]) -> dict[str, Any]:
    return dump["cases"][0]


#: damage → what the error says (a regex); each is valid JSON that is not a recall dump.
RECALL_DAMAGE = {
    "top level a list": (lambda d: [d], r"(Expected `object`, got `array`"
                                        r"|not a Needle recall dump or search report)"),
    "cases a string": (lambda d: {**d, "cases": "many"},
                       r"Expected `array`, got `str` - at `\$\.cases`"),
    "a case not an object": (lambda d: {**d, "cases": [[1, 2]]},
                             r"Expected `object`, got `array` - at `\$\.cases\[0\]`"),
    "a case without outcome": (lambda d: _drop(d, "outcome"),
                               r"missing required field `outcome` - at `\$\.cases\[0\]` "
                               r"\(case '\w+'\)"),
    "an unknown outcome": (lambda d: _set(d, outcome="exploded"),
                           r"Invalid value 'exploded' - at `\$\.cases\[0\]\.outcome` "
                           r"\(case '\w+'\)"),
    "start_line a string": (lambda d: _set(d, start_line="12"),
                            r"Expected `int`, got `str` - at `\$\.cases\[0\]\.start_line`"),
    "corpus not an object": (lambda d: {**d, "corpus": "http_server"},
                             r"Expected `object`, got `str` - at `\$\.corpus`"),
    "no scoring": (lambda d: {k: v for k, v in d.items() if k != "scoring"},
                   r"missing required field `scoring`"),
    "shard not an object": (lambda d: {**d, "shard": 3},
                            r"Expected `object`, got `int` - at `\$\.shard`"),
}


def _drop(dump: dict[str, Any], key: str) -> dict[str, Any]:
    dump = copy.deepcopy(dump)
    del _first_case(dump)[key]
    return dump


def _set(dump: dict[str, Any], **fields: Any) -> dict[str, Any]:
    dump = copy.deepcopy(dump)
    _first_case(dump).update(fields)
    return dump


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real dump: the built-in reference model on http_server through `pytest evals`."""
    results = tmp_path_factory.mktemp("results")
    record_run(results, None, "reference", ["http_server"])
    return results / f"{PAIR}.json"


def damaged(good: Path, path: Path, damage: str) -> tuple[Path, str]:
    make, message = RECALL_DAMAGE[damage]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(make(json.loads(good.read_text(encoding="utf-8")))),
                    encoding="utf-8")
    return path, message


def assert_named(err: str, path: Path, message: str) -> None:
    assert "Traceback" not in err
    assert re.search(re.escape(str(path)) + r".*" + message, err), err


@pytest.mark.parametrize("damage", RECALL_DAMAGE)
def test_the_needle_commands_name_a_bad_dump(good, tmp_path, capsys, damage):
    bad, message = damaged(good, tmp_path / f"{PAIR}.json", damage)
    commands = {"rescore": ["rescore", str(bad)],
                "merge": ["merge", str(bad), "--out", str(tmp_path / "m.json")],
                "compare": ["compare", str(good), str(bad)]}
    for name, argv in commands.items():
        assert needle(argv) == 2, name
        assert_named(capsys.readouterr().err, bad, message)
    state, detail = dump_state(bad)
    assert state == "unreadable"
    assert_named(detail, bad, message)
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("damage", ["cases a string", "a case without outcome",
                                    "a case not an object"])
def test_resume_and_baseline_name_a_bad_dump_end_to_end(pytester, good, tmp_path, damage):
    # the store's own run file (found by --resume), --dump PATH with --resume, --baseline
    results = tmp_path / "results"
    stored, message = damaged(good, results / "runs" / PAIR / "20260101-000000.json", damage)
    selection = ("--model", "reference", "--corpus", "http_server")
    for args in (("--resume",), ("--resume", "--dump", str(stored)),
                 ("--dump", str(stored)), ("--baseline", str(stored))):
        result = run_evals(pytester, results, *selection, *args)
        assert_usage_error(result, "*")
        assert_named(result.stderr.str(), stored, message)


SEARCH_DAMAGE = {
    "header a list": (lambda r: {**r, "header": [1]},
                      r"Expected `object`, got `array` - at `\$\.header`"),
    "cases a string": (lambda r: {**r, "cases": "x"},
                       r"Expected `array`, got `str` - at `\$\.cases`"),
    "a case not an object": (lambda r: {**r, "cases": [None]},
                             r"Expected `object`, got `null` - at `\$\.cases\[0\]`"),
    "a case without engine": (lambda r: {**r, "cases": [{k: v for k, v in r["cases"][0].items()
                                                          if k != "engine"}]},
                              r"missing required field `engine` - at `\$\.cases\[0\]` "
                              r"\(case '\w+'\)"),
    "queries without count": (lambda r: {**r, "header": {**r["header"], "queries": {}}},
                              r"missing required field `count` - at `\$\.header\.queries`"),
    "a result's rating a string": (
        lambda r: {**r, "cases": [{**r["cases"][0], "results": [{"url": "u", "rating": "x"}]}]},
        r"Expected `int \| null`, got `str` - at `\$\.cases\[0\]\.results\[0\]\.rating`"),
}


@pytest.fixture
def search_report(tmp_path: Path) -> Path:
    path = tmp_path / "finance__gold-20260701-000000.json"
    finish_run(path, header(), CASES)
    return path


@pytest.mark.parametrize("damage", SEARCH_DAMAGE)
def test_merge_names_a_bad_search_report(search_report, tmp_path, capsys, damage):
    make, message = SEARCH_DAMAGE[damage]
    report = json.loads(search_report.read_text(encoding="utf-8"))
    search_report.write_text(json.dumps(make(report)), encoding="utf-8")
    assert needle(["merge", str(search_report), "--out", str(tmp_path / "m.json")]) == 2
    assert_named(capsys.readouterr().err, search_report, message)


@pytest.mark.parametrize(("lines", "message"), [
    (['{"header": [1]}'], r":1: Expected `object`, got `array` - at `\$\.header`"),
    (["[1, 2]"], r":1: not a journal entry"),
    (['{"header": {}}'], r":1: Object missing required field `bench` - at `\$\.header`"),
    ([json.dumps({"header": header()}), '{"case": 5}'],
     r":2: Expected `object`, got `int` - at `\$\.case`"),
    ([json.dumps({"header": header()}), json.dumps({"case": {**CASES[0], "query_id": 7}})],
     r":2: Expected `str`, got `int` - at `\$\.case\.query_id`"),
])
def test_merge_names_a_bad_search_journal(tmp_path, capsys, lines, message):
    journal = tmp_path / "finance__gold-20260701-000000.partial.jsonl"
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert needle(["merge", str(journal), "--out", str(tmp_path / "m.json")]) == 2
    assert_named(capsys.readouterr().err, journal, message)


def test_a_good_dump_still_reads_in_every_reader(good, tmp_path, capsys):
    """The checks describe real dumps: the reference run passes every reader."""
    assert needle(["rescore", str(good)]) == 0
    assert needle(["merge", str(good), "--out", str(tmp_path / "m.json")]) == 0
    assert needle(["compare", str(good), str(good)]) == 0
    assert dump_state(good)[0] == "complete"
    capsys.readouterr()
    # and what today's writer wrote is what contract.records declares, key for key
    assert mismatches(json.loads(good.read_text(encoding="utf-8")), RecallDump) == []


def test_a_good_dump_resumes_and_gates(pytester, good, tmp_path):
    copy_ = tmp_path / "copy.json"
    copy_.write_text(good.read_text(encoding="utf-8"), encoding="utf-8")
    result = run_evals(pytester, tmp_path, "--model", "reference", "--corpus", "http_server",
                       "--resume", "--dump", str(copy_), "--baseline", str(good))
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
