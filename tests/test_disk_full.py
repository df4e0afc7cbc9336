"""A disk that fills up mid-run (issue 32, item 7): one line naming the file and the resume
command, exit status 28, and nothing lost that was written.

How the disk fills: no tmpfs can be mounted here, so the run loads a small plugin that
makes every write to a file under the results directory fail with ``OSError(ENOSPC)``
after the first N, exactly as ``write(2)`` fails on a full device. It wraps Needle's one
atomic writer and lets the real one clean up (its temp file goes, the target keeps its
previous content), and the run journal's line writer (``kernel.journal``), so what is
checked is Needle's own handling, end to end.
"""

from __future__ import annotations

import errno
import json
import os

import pytest
from evalrun import run_evals

from needle_lib.benches.runfiles import SearchJournal
from needle_lib.diskfull import DISK_FULL_EXIT, disk_full_message, is_no_space
from needle_lib.jsonio import write_json_atomic
from needle_lib.recall.journal import read_recall_run

FAULT_PLUGIN = '''
"""Every write under NEEDLE_TEST_FULL_UNDER fails with ENOSPC after the first
NEEDLE_TEST_FULL_AFTER (a full disk)."""
import errno
import os
from contextlib import contextmanager
from pathlib import Path

import needle_lib.jsonio as jsonio
import needle_lib.kernel.journal as journal

_real = jsonio.atomic_text_file
_under = Path(os.environ["NEEDLE_TEST_FULL_UNDER"]).resolve()
_after = int(os.environ["NEEDLE_TEST_FULL_AFTER"])
_writes = 0


class _FullDisk:
    def __init__(self, fh):
        self._fh = fh

    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)


@contextmanager
def atomic_text_file(path, *, durable=True):
    global _writes
    with _real(path, durable=durable) as fh:
        if Path(path).resolve().is_relative_to(_under):
            _writes += 1
            if _writes > _after:
                yield _FullDisk(fh)
                return
        yield fh


_real_line = journal.Journal._write_line


def _write_line(self, line):
    global _writes
    if Path(self.path).resolve().is_relative_to(_under):
        _writes += 1
        if _writes > _after:
            self._fh = _FullDisk(self._fh)
    _real_line(self, line)


jsonio.atomic_text_file = atomic_text_file
journal.Journal._write_line = _write_line
'''

SELECT = ("-k", "http_server", "--corpus", "http_server", "--sample", "4")


# --- the pieces ---------------------------------------------------------------------------

def test_a_failed_atomic_write_names_its_file_and_keeps_the_previous_version(tmp_path,
                                                                            monkeypatch):
    target = tmp_path / "dump.json"
    write_json_atomic(target, {"cases": [1]})

    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)  # the bytes do not fit when they are flushed
    with pytest.raises(OSError) as caught:
        write_json_atomic(target, {"cases": [1, 2]})
    assert is_no_space(caught.value) and caught.value.filename == str(target)
    assert json.loads(target.read_text()) == {"cases": [1]}
    assert [p.name for p in tmp_path.iterdir()] == ["dump.json"]  # no temp file left


def test_a_journal_that_cannot_append_names_itself(tmp_path):
    journal = SearchJournal(tmp_path / "r.partial.jsonl", {"bench": "news"})

    class Full:
        def write(self, _: str) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real, journal._fh = journal._fh, Full()  # type: ignore[assignment]
    with pytest.raises(OSError) as caught:
        journal.append({"query_id": "q"})
    assert caught.value.filename == str(tmp_path / "r.partial.jsonl")
    real.close()


def test_the_message_is_one_line_with_the_file_and_a_quoted_resume_command(pytestconfig):
    error = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "results/a b.json")
    message = disk_full_message(error, pytestconfig.invocation_params.args)
    assert "\n" not in message
    assert message.startswith("needle: disk full writing results/a b.json (No space left")
    assert message.rstrip().endswith("--resume")
    assert DISK_FULL_EXIT not in range(0, 6)  # none of pytest's own statuses


# --- end to end ---------------------------------------------------------------------------

def test_a_full_disk_mid_run_stops_with_one_line_exit_28_and_loses_nothing(pytester, tmp_path,
                                                                           monkeypatch):
    """Four cases; the disk fills after four writes (the journal's header, the dump as the
    run starts, two cases' journal lines), so case 3's line does not fit."""
    results = tmp_path / "results"
    pytester.makepyfile(needle_full_disk=FAULT_PLUGIN)
    monkeypatch.setenv("NEEDLE_TEST_FULL_UNDER", str(results))
    monkeypatch.setenv("NEEDLE_TEST_FULL_AFTER", "4")
    result = run_evals(pytester, results, *SELECT, "-p", "needle_full_disk")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == DISK_FULL_EXIT, output
    assert "INTERNALERROR" not in output and "Traceback" not in output
    (run_file,) = (results / "runs" / "http_server__reference").glob("*.json")
    lines = [line for line in output.splitlines() if "disk full" in line]
    assert len(lines) == 1, output
    journal = run_file.with_name(run_file.stem + ".partial.jsonl")
    assert f"needle: disk full writing {journal} (No space left on device)" in lines[0]
    assert "--resume" in lines[0] and "needle_full_disk" in lines[0]
    # nothing written is lost: the run (its dump with its journal folded in) holds both
    # cases filed before, in progress, and the latest view shows the same
    run = read_recall_run(run_file)
    assert run["in_progress"] is True and len(run["cases"]) == 2
    view = results / "http_server__reference.json"
    assert read_recall_run(view)["cases"] == run["cases"]
    leftovers = [p for p in results.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    assert not list(results.rglob("*.html"))  # no report half-written onto a full disk
    assert "4 passed" not in output  # the run stopped: case 4 was never asked
