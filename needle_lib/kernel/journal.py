"""A run's journal: a header line, then one line per case, appended as each case settles.

Every benchmark writes its run this way (the search report and the recall dump are folds of
their journal): constant work per case however long the run, and a ``kill -9`` loses at most
the case in flight, whose line it may leave cut short. Each line is flushed to the OS as it
is written (no fsync, which would cost more than the rest of a case's bookkeeping: only a
machine crash could then lose the last cases, and the run would be redone anyway).

The writer holds an exclusive ``flock`` on its journal from before its first line until the
run's result file is written, and the kernel drops the lock when the process dies. So a
journal nobody holds was left by a killed run and may be removed, while one whose run is
still going (the same command started again in a second terminal with ``--resume``) is never
pulled from under its writer. A second run told the same result path (two ``--dump PATH``)
fails with ``JournalInUse`` naming the path and the run that holds it, and the journal is
not touched: the file is emptied only once its lock is held. Without ``flock`` (Windows,
some network file systems) a journal's writer cannot be told apart: no journal is removed,
and two runs on one path are not detected.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Literal

from needle_lib.contract.schema import journal_entries
from needle_lib.errors import UsageError
from needle_lib.jsonio import name_the_file

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

JOURNAL_SUFFIX = ".partial.jsonl"


def journal_kind(path: Path) -> Literal["recall", "search"]:
    """Which family's run the journal at ``path`` is, by its header line: a recall header
    names its ``corpus`` and ``model`` and no ``bench``. Commands given a
    ``.partial.jsonl`` read it as its own kind; anything else is read as the search journal
    it has always been taken for, whose reader names what its header lacks."""
    first = next(journal_entries(path), None)  # the header only: the rest is not read
    if first is not None:
        _, kind, header = first
        if kind == "header" and "corpus" in header and "model" in header \
                and "bench" not in header:
            return "recall"
    return "search"


def journal_path(result_path: Path) -> Path:
    """The journal beside a run's result file (``r.json`` → ``r.partial.jsonl``)."""
    return result_path.with_name(result_path.stem + JOURNAL_SUFFIX)


class JournalInUse(UsageError):
    """Another live run writes this journal: two runs were given one result path."""


def _holder(path: Path) -> str:
    """The process holding ``path``'s lock, as ``/proc/locks`` and its command line tell
    (Linux); a plain "another run" where they do not."""
    try:
        inode = path.stat().st_ino
        with open("/proc/locks", encoding="ascii") as locks:
            for line in locks:
                fields = line.split()
                # "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"
                if len(fields) >= 6 and fields[1] == "FLOCK" \
                        and fields[5].rsplit(":", 1)[-1] == str(inode):
                    pid = fields[4]
                    command = Path(f"/proc/{pid}/cmdline").read_bytes()
                    words = command.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
                    return f"process {pid}: {words}" if words else f"process {pid}"
    except (OSError, ValueError):
        pass
    return "another run"


def hold_for_writing(fh: IO[str], path: Path) -> None:
    """Mark ``fh``'s journal as written to for as long as ``fh`` stays open;
    ``JournalInUse`` when a live process holds it already."""
    if fcntl is None:
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # EWOULDBLOCK: a live writer
        raise JournalInUse(_in_use(path, _holder(path))) from None
    except OSError:
        pass  # no flock on this file system: the writer cannot be told apart


def writer_of(path: Path) -> str | None:
    """Who writes the journal at ``path`` (``process 123: …``), or None when no live
    process does (or there is no journal, or no ``flock`` to tell)."""
    if fcntl is None:
        return None
    try:
        with path.open("rb") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _holder(path)
            except OSError:
                return None
    except FileNotFoundError:
        return None
    return None


def refuse_if_written(path: Path) -> None:
    """``JournalInUse`` when a live run writes the journal of the result file ``path``
    this run is to write."""
    journal = journal_path(path)
    writer = writer_of(journal)
    if writer is not None:
        raise JournalInUse(_in_use(journal, writer))


def _in_use(journal: Path, writer: str) -> str:
    return (f"{journal} is being written by another run ({writer}); two runs cannot share "
            "one --dump or --report path: give this run another, or wait for that one to end")


def remove_if_abandoned(path: Path, settle: Callable[[], object] | None = None) -> bool:
    """Remove the journal at ``path`` unless a live process holds it; whether it went.
    ``settle`` runs first, under the journal's lock (it writes the journal's cases where
    they outlive it); when it raises, the journal stays."""
    if fcntl is None:
        return False
    try:
        with path.open("rb") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by its writer, or no flock on this file system
                return False
            if settle is not None:
                settle()
            path.unlink()
    except FileNotFoundError:
        return False
    return True


class Journal:
    """Append-only case log of one run (one writer: the controller)."""

    def __init__(self, path: Path, header: Mapping[str, object]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # opened without truncating: a live run's journal is emptied only once it is ours
        self._fh: IO[str] = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666), "w",
                                      encoding="utf-8")
        try:
            hold_for_writing(self._fh, path)  # until the result file is written
        except JournalInUse:
            self._fh.close()
            raise
        self._fh.truncate(0)
        self._write_line(json.dumps({"header": header}, ensure_ascii=False))

    def append(self, case: Mapping[str, object]) -> None:
        self.append_encoded(json.dumps(case, ensure_ascii=False))

    def append_encoded(self, case: str) -> None:
        """A case already JSON text (``json.dumps(case, ensure_ascii=False)``)."""
        self._write_line('{"case": ' + case + "}")

    def _write_line(self, line: str) -> None:
        try:
            self._fh.write(line + "\n")
            self._fh.flush()
        except OSError as exc:  # a full disk: the message must name the journal
            name_the_file(exc, self.path)
            raise

    def close(self, *, remove: bool) -> None:
        self._fh.close()
        if remove:
            self.path.unlink(missing_ok=True)

    def abandon(self) -> None:
        """Close the journal as it stands (a full disk): the run reads back like a killed
        one. The line that did not fit is the case in flight."""
        with contextlib.suppress(OSError):
            self.close(remove=False)


