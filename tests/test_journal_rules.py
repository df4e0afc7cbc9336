"""The journal's rules, for both families: a killed recall run's journal is settled by the
next run of its pair; a journal given to ``needle compare`` or ``needle merge`` is read as
the kind its header says; two runs on one result path never write one journal."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_recall_journal import PAIR, outcome, record, writer

from needle_lib.cli import main
from needle_lib.kernel.journal import (
    Journal,
    JournalInUse,
    journal_kind,
    journal_path,
    refuse_if_written,
    writer_of,
)
from needle_lib.recall.journal import read_dump, settle_abandoned
from needle_lib.recall.store import ResultStore

# --- a killed recall run's journal ------------------------------------------------------


def killed_run(root: Path, *numbers: int) -> Path:
    """A run of ``PAIR`` killed after settling ``numbers``: its dump as the start wrote it,
    its journal beside it, no process holding it."""
    dumps = writer(root)
    for number in numbers:
        dumps.add(record(number), outcome(number))
    dumps.abandon()  # closed as it stands: the lock goes, as when the process dies
    return dumps.paths[PAIR]


def test_the_next_run_of_the_pair_settles_a_killed_runs_journal(tmp_path):
    killed = killed_run(tmp_path, 1, 2)
    before = read_dump(killed)
    assert [c["case_id"] for c in before["cases"]] == ["f1", "f2"]
    assert journal_path(killed).is_file()

    later = writer(tmp_path)
    later.add(record(3), outcome(3))
    later.finish()
    # the killed run's cases are in its own dump now, which reads back as before
    assert not journal_path(killed).exists()
    assert read_dump(killed) == before
    assert json.loads(killed.read_text(encoding="utf-8"))["cases"] == before["cases"]


def test_a_journal_stays_while_its_writer_lives_or_the_run_was_interrupted(tmp_path):
    live = writer(tmp_path)
    live.add(record(1), outcome(1))  # its journal is open (and locked) in this process
    live_run = live.paths[PAIR]
    assert writer_of(journal_path(live_run)) is not None

    interrupted = writer(tmp_path)
    interrupted.add(record(2), outcome(2))
    interrupted.finish(interrupted=True)
    assert journal_path(live_run).is_file()  # an interrupted run settles nothing

    later = writer(tmp_path)
    later.add(record(3), outcome(3))
    later.finish()
    assert journal_path(live_run).is_file()  # its writer still writes it
    live.finish()
    assert not journal_path(live_run).exists()


def test_a_finishing_run_holds_its_journal_until_its_dump_is_written(tmp_path):
    """Two runs of one pair at once: the one that finishes first must never settle the
    other's journal in the moment between that run's last line and its final dump."""
    dumps = writer(tmp_path)
    dumps.add(record(1), outcome(1))
    run_file = dumps.paths[PAIR]
    write = dumps._write
    seen: list[bool] = []

    def racing_write(pair: str, dump: dict[str, Any]) -> None:
        seen.append(settle_abandoned(run_file))  # another run settling, right now
        write(pair, dump)

    dumps._write = racing_write  # type: ignore[method-assign]
    (dump,) = dumps.finish()
    assert seen == [False]
    assert json.loads(run_file.read_text(encoding="utf-8"))["in_progress"] is False
    assert dump["in_progress"] is False and not journal_path(run_file).exists()


def test_a_journal_just_created_is_left_to_its_run(tmp_path):
    run_file = tmp_path / "r.json"
    run_file.write_text("", encoding="utf-8")
    journal_path(run_file).touch()  # a run between creating its journal and locking it
    assert settle_abandoned(run_file) is False
    assert journal_path(run_file).is_file()


def test_a_journal_that_does_not_read_is_kept(tmp_path):
    killed = killed_run(tmp_path, 1)
    journal = journal_path(killed)
    journal.write_text(journal.read_text(encoding="utf-8") + "not json\n{}\n",
                       encoding="utf-8")
    assert settle_abandoned(killed) is False
    assert journal.is_file()


def test_a_resumed_killed_run_leaves_no_journal_behind(tmp_path):
    killed = killed_run(tmp_path, 1, 2)
    kept = read_dump(killed)["cases"]
    resumed = writer(tmp_path, (killed, kept))
    resumed.add(record(3), outcome(3))
    (dump,) = resumed.finish()
    assert [c["case_id"] for c in dump["cases"]] == ["f1", "f2", "f3"]
    assert not journal_path(killed).exists()
    assert [c["case_id"] for c in read_dump(killed)["cases"]] == ["f1", "f2"]
    assert not list(ResultStore(tmp_path).run_dir(PAIR).glob("*.partial.jsonl"))


# --- a journal given to compare or merge -------------------------------------------------


def search_journal(path: Path) -> Path:
    journal = Journal(path, {"bench": "news", "engines": ["exa"]})
    journal.close(remove=False)
    return path


def test_a_journals_kind_is_its_headers(tmp_path):
    killed = killed_run(tmp_path, 1)
    assert journal_kind(journal_path(killed)) == "recall"
    assert journal_kind(search_journal(tmp_path / "s.partial.jsonl")) == "search"
    odd = tmp_path / "odd.partial.jsonl"
    odd.write_text('{"header": {"what": 1}}\n', encoding="utf-8")
    assert journal_kind(odd) == "search"  # whose reader names the missing `bench`


def test_merge_and_compare_read_a_recall_journal_as_recall(tmp_path, capsys):
    killed = killed_run(tmp_path, 1, 2)
    journal = journal_path(killed)
    out = tmp_path / "merged.json"
    assert main(["merge", str(journal), "--out", str(out)]) == 1  # 2 of 4 cases
    err = capsys.readouterr().err
    assert "2 of 4 expected cases are in no part" in err
    merged = json.loads(out.read_text(encoding="utf-8"))
    assert merged["benchmark"] == "recall"
    assert [c["case_id"] for c in merged["cases"]] == ["f1", "f2"]

    # compare reads it as the recall run it is (before, as a search journal: an error)
    assert main(["compare", "--json", str(journal), str(killed)]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["shared_targets"] == 2
    assert (compared["wins"], compared["losses"], compared["ties"]) == (0, 0, 2)


def test_merge_and_compare_name_a_journal_of_no_known_kind(tmp_path, capsys):
    odd = tmp_path / "odd.partial.jsonl"
    odd.write_text('{"header": {"what": 1}}\n', encoding="utf-8")
    expected = f"{odd}:1: Object missing required field `bench` - at `$.header`"
    assert main(["merge", str(odd), "--out", str(tmp_path / "m.json")]) == 2
    assert expected in capsys.readouterr().err
    assert main(["compare", str(odd), str(odd)]) == 2
    assert expected in capsys.readouterr().err


# --- two runs on one result path ----------------------------------------------------------


def test_a_second_writer_of_one_journal_fails_and_leaves_it_whole(tmp_path):
    path = tmp_path / "d.partial.jsonl"
    first = Journal(path, {"corpus": {"name": "a"}, "model": {"key": "m"}})
    first.append({"case_id": "c1"})
    written = path.read_text(encoding="utf-8")
    with pytest.raises(JournalInUse) as refused:
        Journal(path, {"corpus": {"name": "b"}, "model": {"key": "m"}})
    message = str(refused.value)
    assert str(path) in message and f"process {os.getpid()}" in message
    assert "--dump" in message
    assert path.read_text(encoding="utf-8") == written  # not truncated
    first.append({"case_id": "c2"})
    first.close(remove=False)
    assert path.read_text(encoding="utf-8").count("\n") == 3
    # once the first run is gone, a run may take the path again
    again = Journal(path, {"corpus": {"name": "b"}, "model": {"key": "m"}})
    again.close(remove=True)


def test_a_result_path_a_live_run_writes_is_refused_before_asking(tmp_path):
    dump = tmp_path / "d.json"
    refuse_if_written(dump)  # nobody writes it: fine
    live = Journal(journal_path(dump), {"bench": "news"})
    with pytest.raises(JournalInUse, match=r"d\.partial\.jsonl is being written by another run"):
        refuse_if_written(dump)
    live.close(remove=False)
    refuse_if_written(dump)  # a killed run's journal: this run may take it over


def held(path: Path) -> Journal:
    header: dict[str, Any] = {"corpus": {"name": "http_server"}, "model": {"key": "reference"}}
    return Journal(path, header)


def test_a_second_run_on_one_dump_path_is_a_usage_error(pytester, tmp_path):
    from evalrun import assert_usage_error, run_evals

    dump = tmp_path / "shared.json"
    other = held(journal_path(dump))  # the first run, still going
    try:
        written = journal_path(dump).read_text(encoding="utf-8")
        result = run_evals(pytester, tmp_path, "-k", "http_server", "--corpus",
                           "http_server", "--sample", "2", "--dump", str(dump))
        assert_usage_error(result, f"*{journal_path(dump)} is being written by another run "
                                   f"(process {os.getpid()}*")
        assert journal_path(dump).read_text(encoding="utf-8") == written
        assert not dump.exists()
    finally:
        other.close(remove=True)
