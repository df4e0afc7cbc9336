"""The result store: no run destroys an earlier result, and readers see the right one."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from evalrun import assert_usage_error, load_dump, run_evals

from needle_lib.cli import main as needle
from needle_lib.llm import ChatResult
from needle_lib.paths import REPO_ROOT
from needle_lib.recall.corpus import ScoringPolicy
from needle_lib.recall.results import (
    STORED_ANSWER_CHARS,
    answer_fields,
    score_fields,
    stored_answer_fields,
    stored_result,
)
from needle_lib.recall.score import score_answer
from needle_lib.recall.store import DEFAULT_SELECTION, STORED_AS, ResultStore
from needle_lib.report.html import diff_html
from needle_lib.testing.loopback import Response
from needle_lib.testing.openai_server import FakeOpenAIServer

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
    again = run_evals(pytester, tmp_path, *CORPUS, "--function", one, "--no-comments", "--resume")
    assert again.ret == 0, again.stdout.str()
    newest = max((tmp_path / "runs" / PAIR).glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert json.loads(newest.read_text())["resumed_from"]["cases_kept"] == 1


def test_an_explicit_dump_of_another_setup_is_refused_not_overwritten(pytester, tmp_path):
    dump = tmp_path / "mine.json"
    first = run_evals(pytester, tmp_path, *CORPUS, "--sample", "2", "--dump", str(dump))
    assert first.ret == 0, first.stdout.str()
    before = dump.read_text()
    other = run_evals(
        pytester, tmp_path, *CORPUS, "--sample", "2", "--relax-indent", "--dump", str(dump)
    )
    assert_usage_error(
        other, f"--dump {dump} holds a run of a different setup*", "*scoring*relax_indent*"
    )
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
        "20260701-001705.json",
        "20260701-001705-2.json",
        "20260701-001705-3.json",
    ]
    store.save(PAIR, first, {"complete": False, DEFAULT_SELECTION: True, "cases": [1]})
    store.save(PAIR, second, {"complete": True, DEFAULT_SELECTION: True, "cases": [1, 2]})
    store.save(PAIR, third, {"complete": False, DEFAULT_SELECTION: True, "cases": [3]})
    view = json.loads(store.latest_path(PAIR).read_text())
    assert view[STORED_AS] == f"runs/{PAIR}/{second.name}"  # complete beats a later partial
    assert store.runs(PAIR) == [third, second, first]
    assert json.loads(first.read_text())["cases"] == [1]  # every run keeps its own cases


def test_the_view_follows_the_latest_view_rule_by_start_not_by_save(tmp_path):
    """``kernel.latest.takes_view`` decides: a default run beats a narrower one, a complete
    one an incomplete one, and among equals the run *started* last, whichever saves last
    (two runs of one pair at once)."""
    store = ResultStore(tmp_path)
    early = store.new_run(PAIR, STARTED)
    late = store.new_run(PAIR, STARTED + timedelta(hours=1))
    sample = store.new_run(PAIR, STARTED + timedelta(hours=2))

    def view() -> str:
        return json.loads(store.latest_path(PAIR).read_text())[STORED_AS]

    def save(run, **state):
        store.save(PAIR, run, {DEFAULT_SELECTION: True, "cases": [], **state})

    save(early, in_progress=True, complete=False)
    assert view() == f"runs/{PAIR}/{early.name}"  # a run in progress fills an empty view
    save(late, in_progress=True, complete=False)
    assert view() == f"runs/{PAIR}/{late.name}"  # and the newer one takes it
    save(early, in_progress=False, complete=False)  # cut short, saved after the newer one
    assert view() == f"runs/{PAIR}/{late.name}"
    save(sample, in_progress=False, complete=True, **{DEFAULT_SELECTION: False})
    assert view() == f"runs/{PAIR}/{late.name}"  # a complete --sample run never takes it
    save(late, in_progress=False, complete=True)
    assert view() == f"runs/{PAIR}/{late.name}"
    save(early, in_progress=False, complete=True)  # complete now, but started earlier
    assert view() == f"runs/{PAIR}/{late.name}"


def test_a_dump_in_progress_is_rewritten_compact_and_the_finished_one_durable(
    tmp_path, monkeypatch
):
    """Per-case rewrites use json's C encoder and no fsync (a killed run still finds the
    last one whole); the run's last write is indented and fsynced, and the view, a link to
    the run file, reads the same."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    store = ResultStore(tmp_path)
    run = store.new_run(PAIR, STARTED)
    cases = [{"case_id": "a", "function": "f"}]
    store.save(PAIR, run, {"in_progress": True, "complete": False, "cases": cases})
    assert synced == []
    for path in (run, store.latest_path(PAIR)):
        text = path.read_text()
        assert text.count("\n") == 1 and json.loads(text)["cases"] == cases
    store.save(PAIR, run, {"in_progress": False, "complete": True, "cases": cases})
    assert len(synced) == 1  # the run file; the view is a link to it, not a second copy
    for path in (run, store.latest_path(PAIR)):
        text = path.read_text()
        assert text.count("\n") > 1 and json.loads(text)["complete"] is True


class LockstepServer(FakeOpenAIServer):
    """A perfect model that answers a request only once another request is in flight too:
    two serial runs against it advance in lockstep, so their dump writes interleave on every
    case (the race of two runs on one pair), synchronised by the requests themselves."""

    def __init__(self) -> None:
        super().__init__("perfect")
        self.partners = threading.Barrier(2)

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        # the deadline only bounds a broken run; a good one never waits for it
        with contextlib.suppress(threading.BrokenBarrierError):
            self.partners.wait(timeout=240)
        return super().handle(method, path, headers, body)


def test_two_runs_on_one_pair_at_once_each_keep_their_cases(tmp_path):
    """Issue 20.11 / 25: disjoint ``-k`` runs of one (corpus, model) at the same time."""
    results, model = tmp_path / "results", "lockstep-fake"
    selections = {
        "parse_request or send_error or guess_type": 3,
        "log_message or translate_path or is_cgi": 3,
    }
    with LockstepServer() as server:
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    str(REPO_ROOT / "evals" / "test_recall.py"),
                    f"--rootdir={REPO_ROOT}",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "--no-color",
                    "--results-dir",
                    str(results),
                    "--model",
                    model,
                    "--base-url",
                    server.url,
                    "--corpus",
                    "http_server",
                    "-k",
                    selection,
                ],
                cwd=REPO_ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for selection in selections
        ]
        outputs = [run.communicate(timeout=600)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], "\n".join(outputs)
    assert not server.partners.broken  # every request met its partner: the runs overlapped
    pair = f"http_server__{model}"
    store = ResultStore(results)
    files = store.runs(pair)
    assert len(files) == 2
    held = {frozenset(c["function"] for c in json.loads(f.read_text())["cases"]) for f in files}
    wanted = {frozenset(s.split(" or ")) for s in selections}
    assert held == wanted  # each run's own cases, none lost, none borrowed
    for path in files:
        dump = json.loads(path.read_text())
        assert [c["outcome"] for c in dump["cases"]] == ["passed"] * 3
        assert dump["in_progress"] is False
    view = json.loads(store.latest_path(pair).read_text())
    source = results / view[STORED_AS]
    assert source in files
    assert {k: v for k, v in view.items() if k != STORED_AS} == {
        k: v for k, v in json.loads(source.read_text()).items() if k != STORED_AS
    }


def test_an_8_mb_answer_is_stored_once_and_capped(tmp_path):
    """Issue 32 item 5: an 8 MB answer was stored three times (the run file, the latest
    view, the HTML report's diff): 24 MB from one case. The answer is kept (and scored) up
    to STORED_ANSWER_CHARS with a flag, and the view is a link to the run file."""
    expected = [f"    x{i} = {i}" for i in range(20)]
    answer = "\n".join(expected) + "\n" + ("y" * 999 + "\n") * 8_000  # 8 MB of babble
    reasoning = "r" * 100_000
    result = ChatResult(content=answer, reasoning=reasoning, finish_reason="stop", usage=None,
                        timings=None, latency_s=1.0, model="m", attempts=1)
    fields = answer_fields(result)
    assert len(fields["response"]) == STORED_ANSWER_CHARS <= 65_536
    assert fields["response"] == answer[:STORED_ANSWER_CHARS]
    assert fields["reasoning"] == reasoning[:STORED_ANSWER_CHARS]
    assert fields["answer_cut"] == {"response": len(answer), "reasoning": len(reasoning)}
    assert stored_answer_fields(fields) == fields  # a resumed case keeps its flag
    scored = stored_result(fields)  # the fixture scores what it stores
    score = score_answer(scored.content, expected, ["code"] * 20, [], ScoringPolicy())
    assert score.matched == 20  # the answer's head still holds the lines asked for
    store = ResultStore(tmp_path)
    run = store.new_run(PAIR, STARTED)
    case = {"case_id": "a", "function": "f", **fields}
    store.save(PAIR, run, {"in_progress": False, "complete": True, "cases": [case]})
    view = store.latest_path(PAIR)
    assert view.is_symlink() and os.readlink(view) == f"runs/{PAIR}/{run.name}"
    assert json.loads(view.read_text())["cases"][0]["answer_cut"] == fields["answer_cut"]
    on_disk = sum(p.lstat().st_size for p in tmp_path.rglob("*"))
    page = diff_html({**case, **score_fields(score)}, [d.to_json() for d in score.diff])
    assert on_disk + len(page.encode()) < 4 * STORED_ANSWER_CHARS + 200_000  # not 24 MB


def test_the_view_becomes_a_link_and_an_older_dump_in_its_place_is_kept(tmp_path):
    store = ResultStore(tmp_path)
    old = {"complete": True, "cases": [{"case_id": str(n)} for n in range(16)]}
    store.latest_path(PAIR).write_text(json.dumps(old))  # a dump from before the store
    run = store.new_run(PAIR, STARTED)
    store.save(PAIR, run, {"complete": True, DEFAULT_SELECTION: True, "cases": [{}]})
    assert store.latest_path(PAIR).is_symlink()
    assert json.loads(store.latest_path(PAIR).read_text())[STORED_AS] == f"runs/{PAIR}/{run.name}"
    kept = [p for p in store.runs(PAIR) if p != run]
    assert len(kept) == 1 and json.loads(kept[0].read_text()) == old  # moved, not destroyed
