"""Whether a search run's journal still has a writer: the writer holds an exclusive ``flock``
on it from its first line until its report is written, and the kernel drops the lock when
the process dies. So a journal nobody holds was left by a killed run and may be removed,
while one whose run is still going (the same command started again in a second terminal
with ``--resume``) is never pulled from under its writer. Without ``flock`` (Windows, some
network file systems) a journal's writer cannot be told apart, and no journal is removed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


def hold_for_writing(fh: IO[str]) -> None:
    """Mark ``fh``'s journal as written to for as long as ``fh`` stays open."""
    if fcntl is not None:
        # another holder (two runs told the same --report) or no flock here: the journal
        # is then live or untellable, and it is kept either way
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
