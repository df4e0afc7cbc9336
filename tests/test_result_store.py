"""The result store: no run destroys an earlier result, and readers see the right one."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from evalrun import assert_usage_error, load_dump, run_evals

from needle_lib.cli import main as needle
from needle_lib.recall.store import DEFAULT_SELECTION, STORED_AS, ResultStore

PAIR = "http_server__reference"
CORPUS = ("-k", "http_server", "--corpus", "http_server")
STARTED = datetime(2026, 7, 1, 0, 17, 5, tzinfo=UTC)


def test_a_narrow_run_never_replaces_the_complete_default_run(pytester, tmp_path, capsys):
    full = run_evals(pytester, tmp_path, *CORPUS)
    assert full.ret == 0, full.stdout.str()
    complete = load_dump(tmp_path, PAIR)
    assert complete["complete"] and complete[DEFAULT_SELECTION]
    one = complete["cases"][0]["function"]
    narrow = run_evals(pytester, tmp_path, *CORPUS, "--function", one, "--no-comments")
    assert narrow.ret == 0, narrow.stdout.str()
    view = load_dump(tmp_path, PAIR)
    assert view[STORED_AS] == complete[STORED_AS]  # still the 10-case run
    assert len(view["cases"]) == len(complete["cases"]) > 1
    runs = sorted((tmp_path / "runs" / PAIR).glob("*.json"))
    held = [json.loads(path.read_text()) for path in runs]
    assert len(runs) == 2 and sorted(len(d["cases"]) for d in held) == [1, len(view["cases"])]
    assert needle(["status", "--model", "reference", "--results", str(tmp_path)]) == 0
    assert "http_server__reference" in capsys.readouterr().out
    # --resume picks the stored run of its own setup (the narrow one), asks nothing again
    again = run_evals(pytester, tmp_path, *CORPUS, "--function", one, "--no-comments",
                      "--resume")
    assert again.ret == 0, again.stdout.str()
    newest = max((tmp_path / "runs" / PAIR).glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert json.loads(newest.read_text())["resumed_from"]["cases_kept"] == 1


def test_an_explicit_dump_of_another_setup_is_refused_not_overwritten(pytester, tmp_path):
    dump = tmp_path / "mine.json"
    first = run_evals(pytester, tmp_path, *CORPUS, "--sample", "2", "--dump", str(dump))
    assert first.ret == 0, first.stdout.str()
    before = dump.read_text()
    other = run_evals(pytester, tmp_path, *CORPUS, "--sample", "2", "--relax-indent",
                      "--dump", str(dump))
    assert_usage_error(other, f"--dump {dump} holds a run of a different setup*",
                       "*scoring*relax_indent*")
    assert dump.read_text() == before
    same = run_evals(pytester, tmp_path, *CORPUS, "--sample", "2", "--dump", str(dump))
    assert same.ret == 0  # the same setup again may rewrite its own file


def test_a_dump_from_before_the_store_still_loads_and_is_kept(tmp_path):
    store = ResultStore(tmp_path)
    old = {"complete": True, "cases": [{"case_id": str(n)} for n in range(16)]}
    store.latest_path(PAIR).write_text(json.dumps(old))  # today's layout: no stored_as
    assert store.runs(PAIR) == [store.latest_path(PAIR)]
    sample = store.new_run(PAIR, STARTED)
    store.save(PAIR, sample, {"complete": True, DEFAULT_SELECTION: False, "cases": [{}]})
    assert len(json.loads(store.latest_path(PAIR).read_text())["cases"]) == 16
    assert store.runs(PAIR) == [sample, store.latest_path(PAIR)]


def test_runs_started_together_get_their_own_files_and_the_best_becomes_the_view(tmp_path):
    store = ResultStore(tmp_path)
    first, second, third = (store.new_run(PAIR, STARTED) for _ in range(3))
    assert [p.name for p in (first, second, third)] == [
        "20260701-001705.json", "20260701-001705-2.json", "20260701-001705-3.json"]
    store.save(PAIR, first, {"complete": False, DEFAULT_SELECTION: True, "cases": [1]})
    store.save(PAIR, second, {"complete": True, DEFAULT_SELECTION: True, "cases": [1, 2]})
    store.save(PAIR, third, {"complete": False, DEFAULT_SELECTION: True, "cases": [3]})
    view = json.loads(store.latest_path(PAIR).read_text())
    assert view[STORED_AS] == f"runs/{PAIR}/{second.name}"  # complete beats a later partial
    assert store.runs(PAIR) == [third, second, first]
    assert json.loads(first.read_text())["cases"] == [1]  # every run keeps its own cases
