"""State shared by every process of one pytest run (xdist workers included), in SQLite.

Fail-fast and preflight are decisions about a *model* or a (corpus, model) pair, not about
a worker: when one worker finds a server down, the others must stop asking it too. SQLite
in a per-run directory gives every worker the same view with real locking.

A preflight claim names the process that holds it, so a claimant killed mid-preflight
(``kill -9``, the OOM killer) is noticed by whoever waits, and its claim taken over;
otherwise every other worker would wait for a verdict that never comes.

The database lives as long as the run (its directory is removed at the end), so it is
never fsynced (``synchronous = OFF``): a machine crash ends the run anyway, and SQLite's
locking, which the workers rely on, is the same without it. With the default, creating
the tables and each write waited for the disk, a busy disk's tens of milliseconds each.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS errors (model TEXT PRIMARY KEY, consecutive INTEGER, last TEXT);
CREATE TABLE IF NOT EXISTS preflight (pair TEXT PRIMARY KEY, done INTEGER, error TEXT,
                                      owner INTEGER);
"""


class RunState:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "runstate.sqlite3"
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def consecutive_errors(self, model: str) -> tuple[int, str]:
        row = self._db.execute(
            "SELECT consecutive, last FROM errors WHERE model = ?", (model,)
        ).fetchone()
        return (row[0], row[1]) if row else (0, "")

    def note_error(self, model: str, message: str) -> None:
        self._db.execute(
            "INSERT INTO errors VALUES (?, 1, ?) ON CONFLICT(model) DO UPDATE "
            "SET consecutive = consecutive + 1, last = excluded.last",
            (model, message),
        )

    def note_success(self, model: str) -> None:
        self._db.execute("DELETE FROM errors WHERE model = ?", (model,))

    def preflight(self, pair: str, run: Callable[[], str | None], poll: float = 0.05) -> str | None:
        """The preflight verdict of ``pair`` (error text or None), run by one process only.

        The first process to claim the pair runs ``run``; the others wait for its verdict
        instead of sending the same full-size prompt again, and take the claim over if its
        holder died.
        """
        me = os.getpid()
        claimed = self._db.execute(
            "INSERT OR IGNORE INTO preflight VALUES (?, 0, NULL, ?)", (pair, me)
        ).rowcount
        while not claimed:
            row = self._db.execute(
                "SELECT done, error, owner FROM preflight WHERE pair = ?", (pair,)
            ).fetchone()
            if row is None:  # the claimant failed and released it: claim it ourselves
                return self.preflight(pair, run, poll)
            done, error, owner = row
            if done:
                return error
            # Our own unfinished claim is stale too: a process runs one preflight at a time,
            # so it is left from a preflight whose bookkeeping failed (a write error).
            if owner == me or not _alive(owner):
                claimed = self._db.execute(
                    "UPDATE preflight SET owner = ? WHERE pair = ? AND owner = ? AND done = 0",
                    (me, pair, owner),
                ).rowcount
            if not claimed:
                time.sleep(poll)
        try:
            error = run()
        except BaseException:
            self._db.execute("DELETE FROM preflight WHERE pair = ?", (pair,))
            raise
        self._db.execute("UPDATE preflight SET done = 1, error = ? WHERE pair = ?", (error, pair))
        return error


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (workers of one run share a machine). Where
    signal 0 cannot probe (Windows, where ``os.kill`` terminates), assume it does."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True
