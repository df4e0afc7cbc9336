"""A run's journal: a header line, then one line per case, appended as each case settles.

Every benchmark writes its run this way (the search report and the recall dump are folds of
their journal): constant work per case however long the run, and a ``kill -9`` loses at most
the case in flight, whose line it may leave cut short. Each line is flushed to the OS as it
is written (no fsync, which would cost more than the rest of a case's bookkeeping: only a
machine crash could then lose the last cases, and the run would be redone anyway).

The writer holds an exclusive ``flock`` on its journal from its first line until the run's
result file is written, and the kernel drops the lock when the process dies. So a journal
nobody holds was left by a killed run and may be removed, while one whose run is still
going (the same command started again in a second terminal with ``--resume``) is never
pulled from under its writer. Without ``flock`` (Windows, some network file systems) a
journal's writer cannot be told apart, and no journal is removed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from needle_lib.jsonio import name_the_file

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

JOURNAL_SUFFIX = ".partial.jsonl"


def journal_path(result_path: Path) -> Path:
    """The journal beside a run's result file (``r.json`` → ``r.partial.jsonl``)."""
    return result_path.with_name(result_path.stem + JOURNAL_SUFFIX)


def hold_for_writing(fh: IO[str]) -> None:
    """Mark ``fh``'s journal as written to for as long as ``fh`` stays open."""
    if fcntl is not None:
        # another holder (two runs told the same path) or no flock here: the journal is
        # then live or untellable, and it is kept either way
        with contextlib.suppress(OSError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_if_abandoned(path: Path) -> bool:
    """Remove the journal at ``path`` unless a live process holds it; whether it went."""
    if fcntl is None:
        return False
    try:
        with path.open("rb") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by its writer, or no flock on this file system
                return False
            path.unlink()
    except FileNotFoundError:
        return False
    return True


class Journal:
    """Append-only case log of one run (one writer: the controller)."""

    def __init__(self, path: Path, header: Mapping[str, object]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = path.open("w", encoding="utf-8")
        hold_for_writing(self._fh)  # until the result file is written: never removed under us
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


