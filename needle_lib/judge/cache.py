"""On-disk verdict cache in SQLite, shared by concurrent processes and by later runs.

Judging costs money and time, and the same (query, result) recurs across engines, reruns and
xdist workers. SQLite in WAL mode lets several processes read while one writes; every
statement is its own short transaction (autocommit) with a busy timeout, so no writer holds
the file for long. Each process opens its own connection (a connection must not cross a
fork). Only successful verdicts are stored, so failures are retried on the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from needle_lib.judge.verdict import Verdict
from needle_lib.metrics.urls import normalize_url
from needle_lib.paths import CACHE_DIR

DEFAULT_CACHE_PATH = CACHE_DIR / "judge.sqlite3"
#: Seconds a statement waits for another process's write lock before failing.
BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    rating INTEGER NOT NULL,
    label TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    query TEXT NOT NULL,
    url TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""
_UPSERT = """
INSERT INTO verdicts (key, rating, label, reasoning, model, prompt_version, query, url, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET
    rating = excluded.rating, label = excluded.label, reasoning = excluded.reasoning,
    created_at = excluded.created_at
"""


class CacheError(RuntimeError):
    """The cache file cannot be used; the message names it."""


@dataclass(frozen=True)
class JudgedPair:
    """Everything a verdict depends on. The URL is normalised: one page, one verdict."""

    model: str
    prompt_version: str
    query: str
    url: str
    title: str
    snippet: str

    @property
    def normalized_url(self) -> str:
        return normalize_url(self.url)

    @property
    def key(self) -> str:
        """sha256 over the identity fields, so the key column stays small and indexable."""
        identity = [
            self.model,
            self.prompt_version,
            self.query,
            self.normalized_url,
            self.title,
            self.snippet,
        ]
        return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()


class JudgeCache:
    """Verdicts keyed by ``JudgedPair.key`` in one SQLite file (default under CACHE_DIR)."""

    def __init__(self, path: Path = DEFAULT_CACHE_PATH) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._unusable(exc) from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            conn.close()
            raise self._unusable(exc) from None
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _unusable(self, exc: Exception) -> CacheError:
        return CacheError(
            f"{self.path}: cannot open the judge cache ({exc}); "
            "delete the file to start a fresh cache"
        )

    def _execute(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        try:
            return self._connection().execute(sql, params)
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: judge cache query failed ({exc})") from None

    def get(self, pair: JudgedPair) -> Verdict | None:
        """The stored verdict for ``pair`` (``cached=True``), or None."""
        row = self._execute(
            "SELECT rating, label, reasoning FROM verdicts WHERE key = ?", (pair.key,)
        ).fetchone()
        if row is None:
            return None
        return Verdict(rating=row[0], label=row[1], reasoning=row[2], cached=True)

    def put(self, pair: JudgedPair, verdict: Verdict) -> None:
        """Store (or replace) the verdict for ``pair``; query and URL are kept for inspection."""
        self._execute(
            _UPSERT,
            (
                pair.key,
                verdict.rating,
                verdict.label,
                verdict.reasoning,
                pair.model,
                pair.prompt_version,
                pair.query,
                pair.normalized_url,
                time.time(),
            ),
        )

    def __len__(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM verdicts", ()).fetchone()[0])

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = self._pid = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
