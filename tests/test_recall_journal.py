"""The recall run's journal: each case a line beside the dump, the dump the journal's fold.

A run appends every settled case to ``<dump>.partial.jsonl``; the dump is written as the
fold of the journal when the run starts, ends or is interrupted, and every reader folds the
journal of a run that did not finish (a killed run, end to end: ``test_plugin_lifecycle``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord
from needle_lib.contract.schema import SchemaError
from needle_lib.kernel.journal import journal_path
from needle_lib.recall.dumps import RecallDumps
from needle_lib.recall.journal import fold_journal, read_dump, read_recall_run
from needle_lib.recall.store import STORED_AS, ResultStore

PAIR = "tiny__m"
HEADER = {"corpus": {"name": "tiny", "sha256": "0" * 64}, "model": {"key": "m"},
          "scoring": {"count_comments": True, "relax_indent": False}, "expected_cases": 4}


def case(number: int, *, matched: int = 3, response: str = "line") -> dict[str, Any]:
    part = {"matched": matched, "total": 4}
    return {"case_id": f"f{number}", "function": f"f{number}", "start_line": 10 * number,
            "response": response, "matched": matched, "scored": 4, "hallucinated": 0,
            "reindented": 0, "bonus": 0, "latency_s": 0.5, "ratio": matched / 4,
            "passed": matched == 4, "missing": [],
            "composition": {"code": part, "prose": {"matched": 0, "total": 0},
                            "blank_skipped": 0}}


def record(number: int, **fields: Any) -> CaseRecord:
    return {"kind": "recall", "pair": PAIR, "header": HEADER,  # type: ignore[typeddict-item]
            "case": case(number, **fields)}


def outcome(number: int, **fields: Any) -> Outcome:
    return Outcome.PASSED if case(number, **fields)["passed"] else Outcome.FAILED


def writer(root: Path, resumed: tuple[Path, list[dict[str, Any]]] | None = None) -> RecallDumps:
    return RecallDumps(lambda pair: None, ResultStore(root), lambda pair: resumed)


def file_cases(dump: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(c["case_id"], c["outcome"], c["matched"]) for c in dump["cases"]]


def test_a_case_is_one_journal_line_and_the_dump_is_not_rewritten(tmp_path):
    dumps = writer(tmp_path)
    dumps.add(record(2), outcome(2))
    run_file = dumps.paths[PAIR]
    at_start = run_file.read_bytes()
    dumps.add(record(1, matched=4), outcome(1, matched=4))
    assert run_file.read_bytes() == at_start  # written once, as the run started
    assert json.loads(at_start)["cases"] == [] and json.loads(at_start)["in_progress"]
    lines = journal_path(run_file).read_text().splitlines()
    assert [list(json.loads(line)) for line in lines] == [["header"], ["case"], ["case"]]
    assert json.loads(lines[2])["case"]["outcome"] == "passed"


def test_the_dump_a_run_writes_is_the_fold_of_its_journal(tmp_path):
    dumps = writer(tmp_path)
    for number, matched in ((3, 2), (1, 4), (2, 3), (1, 1)):  # f1 filed again: it wins
        dumps.add(record(number, matched=matched), outcome(number, matched=matched))
    run_file = dumps.paths[PAIR]
    kept = shutil.copy(journal_path(run_file), tmp_path / "copy.partial.jsonl")
    (finished,) = dumps.finish()
    written = json.loads(run_file.read_text())
    assert not journal_path(run_file).exists()  # the run is its dump now
    folded = fold_journal(Path(kept), in_progress=False)
    assert {**folded, STORED_AS: written[STORED_AS]} == written
    assert file_cases(written) == [("f1", "failed", 1), ("f2", "failed", 3),
                                   ("f3", "failed", 2)]
    assert written["summary"]["cases"] == 3 and written["summary"]["not_run"] == 1
    assert (written["in_progress"], written["complete"]) == (False, False)
    assert finished["summary"] == written["summary"]
    # the latest view points at it, and reads as it is
    assert read_recall_run(tmp_path / f"{PAIR}.json")["cases"] == written["cases"]


def test_a_killed_run_reads_back_with_every_case_its_journal_holds(tmp_path):
    dumps = writer(tmp_path)
    for number in (1, 2):
        dumps.add(record(number), outcome(number))
    run_file = dumps.paths[PAIR]
    with journal_path(run_file).open("a") as fh:  # the kill cut the third case's line
        fh.write(json.dumps({"case": case(3)})[:40])
    # no finish: the process died; the view still points at the run, as at its start
    for path in (run_file, tmp_path / f"{PAIR}.json"):
        dump = read_recall_run(path)
        assert dump["in_progress"] is True and not dump["complete"]
        assert [c["case_id"] for c in dump["cases"]] == ["f1", "f2"]
        assert dump["summary"]["cases"] == 2 and dump[STORED_AS] == f"runs/{PAIR}/{run_file.name}"


def test_a_view_that_is_a_copy_folds_its_run_files_journal(tmp_path):
    """Where symlinks are refused the latest view is a copy of the dump as the run
    started; it names its run file (``stored_as``), whose journal is folded in."""
    dumps = writer(tmp_path)
    dumps.add(record(1), outcome(1))
    view = tmp_path / f"{PAIR}.json"
    view.unlink()
    shutil.copy(dumps.paths[PAIR], view)
    dumps.add(record(2), outcome(2))
    assert [c["case_id"] for c in read_recall_run(view)["cases"]] == ["f1", "f2"]


def test_a_resumed_run_journals_the_cases_it_keeps(tmp_path):
    earlier = tmp_path / "earlier.json"
    kept = [{**case(1, matched=4), "outcome": "passed", "resumed": True}]
    dumps = writer(tmp_path, (earlier, kept))
    dumps.add(record(2), outcome(2))
    run_file = dumps.paths[PAIR]
    # killed here: the journal alone is the run, the kept case and where it came from too
    dump = read_recall_run(run_file)
    assert [c["case_id"] for c in dump["cases"]] == ["f1", "f2"]
    assert dump["resumed_from"] == {"dump": str(earlier), "cases_kept": 1}
    (finished,) = dumps.finish()
    assert list(finished)[-2:] == ["summary", "resumed_from"]  # where dumps always had it
    assert file_cases(finished) == [("f1", "passed", 4), ("f2", "failed", 3)]


def test_a_cut_line_is_forgiven_only_at_the_end(tmp_path):
    path = tmp_path / "r.partial.jsonl"
    lines = [json.dumps({"header": HEADER}), json.dumps({"case": {**case(1), "outcome": "failed"}})]
    path.write_text("\n".join([lines[0], lines[1][:30], lines[1]]) + "\n")
    with pytest.raises(SchemaError, match=r"r\.partial\.jsonl:2: not JSON"):
        fold_journal(path, in_progress=True)
    path.write_text("\n".join([lines[0], lines[1], lines[1][:30]]))
    assert file_cases(fold_journal(path, in_progress=True)) == [("f1", "failed", 3)]


def test_a_journal_line_without_a_case_id_is_named(tmp_path):
    path = tmp_path / "r.partial.jsonl"
    path.write_text(json.dumps({"header": HEADER}) + "\n" + json.dumps({"case": {"x": 1}}) + "\n")
    with pytest.raises(SchemaError, match=r"r\.partial\.jsonl:2: a recall case needs"):
        fold_journal(path, in_progress=True)
    path.write_text(json.dumps({"case": {**case(1), "outcome": "failed"}}) + "\n")
    with pytest.raises(SchemaError, match="no header line"):
        fold_journal(path, in_progress=True)


def test_a_finished_dump_is_read_as_it_is_and_other_files_untouched(tmp_path):
    dumps = writer(tmp_path)
    dumps.add(record(1), outcome(1))
    run_file = dumps.paths[PAIR]
    dumps.finish()
    # a kill between the dump's last write and the journal's removal leaves both: the
    # finished dump wins
    journal_path(run_file).write_text(json.dumps({"header": HEADER}) + "\n")
    assert read_dump(run_file) == json.loads(run_file.read_text())
    # a search report's journal beside it is its own run's, never folded into the report
    report = tmp_path / "news.json"
    report.write_text(json.dumps({"header": {}, "cases": [], "engines": {}}))
    journal_path(report).write_text("{not json\n")
    assert read_dump(report) == {"header": {}, "cases": [], "engines": {}}
