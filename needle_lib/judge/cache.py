"""On-disk judge cache in SQLite (verdicts and query profiles), shared by processes and runs.

Judging costs money and time, and the same (query, result) recurs across engines, reruns and
xdist workers. SQLite in WAL mode lets several processes read while one writes; every
statement is its own short transaction (autocommit) with a busy timeout, so no writer holds
the file for long. Each process opens its own connection (a connection must not cross a
fork). Only successful answers are stored, so failures are retried on the next run.

Opening is idempotent and tolerates lock contention: when several processes open a fresh
file at the same moment, switching it to WAL and creating the tables need a write lock, and
SQLite answers "database is locked" at once (without waiting out the busy timeout) when two
connections would otherwise deadlock upgrading their locks. Opening therefore retries with
backoff until ``busy_timeout`` has passed, and only then reports the file as unusable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from needle_lib.errors import UsageError
from needle_lib.judge.verdict import ServedBy, Verdict
from needle_lib.metrics.urls import normalize_url
from needle_lib.paths import CACHE_DIR

DEFAULT_CACHE_PATH = CACHE_DIR / "judge.sqlite3"
#: Seconds a statement (or opening the file) waits for other processes' locks before failing.
BUSY_TIMEOUT_S = 30.0
_FIRST_BACKOFF_S = 0.01
_MAX_BACKOFF_S = 0.5
_LOCK_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}

# ``verdicts_v2`` carries the judge's gates; a file from before keeps its old ``verdicts``
# table, which no current key can match (the prompt version is in every key). The file has
# no version number: a column added later is added to an older file on open
# (``_ADDED_COLUMNS``), and its old rows read the column's default: the ``reply`` (the
# judge's raw reply, kept for audit) as empty, who answered (``served_model``, ``output``:
# ``verdict.ServedBy``) as NULL, unknown.
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS verdicts_v2 (
        key TEXT PRIMARY KEY,
        rating INTEGER NOT NULL,
        label TEXT NOT NULL,
        reasoning TEXT NOT NULL,
        gates TEXT NOT NULL,
        reply TEXT NOT NULL DEFAULT '',
        served_model TEXT,
        output TEXT,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        query TEXT NOT NULL,
        url TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS profiles (
        key TEXT PRIMARY KEY,
        profile TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        query TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
)
#: Columns ``verdicts_v2`` gained after files were written without them: name → declaration.
_ADDED_COLUMNS = {"reply": "TEXT NOT NULL DEFAULT ''", "served_model": "TEXT", "output": "TEXT"}
_UPSERT_VERDICT = """
INSERT INTO verdicts_v2
    (key, rating, label, reasoning, gates, reply, served_model, output, model, prompt_version,
     query, url, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET
    rating = excluded.rating, label = excluded.label, reasoning = excluded.reasoning,
    gates = excluded.gates, reply = excluded.reply, served_model = excluded.served_model,
    output = excluded.output, created_at = excluded.created_at
"""
# First writer wins: workers that profiled the same query at once all adopt one profile,
# so their verdict keys (which include the profile) agree and the verdicts are shared.
_INSERT_PROFILE = """
INSERT INTO profiles (key, profile, model, prompt_version, query, created_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO NOTHING
"""


class CacheError(UsageError):
    """The cache file cannot be used; the message names it."""


def _sha256(identity: list[str | None]) -> str:
    return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgedPair:
    """Everything a verdict depends on. The URL is normalised: one page, one verdict.

    ``snippet`` is the evidence as the judge saw it (after the uniform cut), ``today`` the
    date freshness was judged against and ``profile`` the query profile it was given.
    """

    model: str
    prompt_version: str
    query: str
    url: str
    title: str
    snippet: str
    published_date: str | None = None
    today: str = ""
    profile: str = ""

    @property
    def normalized_url(self) -> str:
        return normalize_url(self.url)

    @property
    def key(self) -> str:
        """sha256 over the identity fields, so the key column stays small and indexable."""
        return _sha256([
            self.model, self.prompt_version, self.query, self.normalized_url, self.title,
            self.snippet, self.published_date, self.today, self.profile,
        ])


@dataclass(frozen=True)
class ProfiledQuery:
    """What a query profile depends on: the profiling model, its prompt and the query."""

    model: str
    prompt_version: str
    query: str

    @property
    def key(self) -> str:
        return _sha256([self.model, self.prompt_version, self.query])


def _add_columns(conn: sqlite3.Connection) -> None:
    """Give a ``verdicts_v2`` table from an older Needle the columns it lacks
    (``_ADDED_COLUMNS``; another process may add one at the same moment: that is as good)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(verdicts_v2)")}
    for name, declaration in _ADDED_COLUMNS.items():
        if name in columns:
            continue
        try:
            conn.execute(f"ALTER TABLE verdicts_v2 ADD COLUMN {name} {declaration}")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise


def _lock_contention(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _LOCK_CODES
    return "locked" in str(exc) or "busy" in str(exc)


class JudgeCache:
    """Verdicts and query profiles in one SQLite file (default under CACHE_DIR).

    ``sleep`` and ``clock`` pace the retries while opening; tests inject them.
    """

    def __init__(
        self,
        path: Path = DEFAULT_CACHE_PATH,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._sleep = sleep
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._unusable(exc) from None
        try:
            self._initialise(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise self._unusable(exc) from None
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _initialise(self, conn: sqlite3.Connection) -> None:
        """WAL mode and the tables, retried with backoff while other processes hold locks."""
        deadline = self._clock() + self.busy_timeout
        delay = _FIRST_BACKOFF_S
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    conn.execute(statement)
                _add_columns(conn)
                return
            except sqlite3.OperationalError as exc:
                if not _lock_contention(exc) or self._clock() >= deadline:
                    raise
            self._sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF_S)

    def _unusable(self, exc: Exception) -> CacheError:
        if isinstance(exc, sqlite3.Error) and _lock_contention(exc):
            return CacheError(
                f"{self.path}: the judge cache stayed locked by other processes for "
                f"{self.busy_timeout:g}s ({exc})"
            )
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
        """The stored verdict for ``pair`` (``cached=True``, answered by whom it was when
        first made: ``served_by``), or None."""
        row = self._execute(
            "SELECT rating, label, reasoning, gates, reply, served_model, output, created_at "
            "FROM verdicts_v2 WHERE key = ?",
            (pair.key,),
        ).fetchone()
        if row is None:
            return None
        return Verdict(rating=row[0], label=row[1], reasoning=row[2], cached=True,
                       gates=json.loads(row[3]), reply=row[4],
                       served_by=ServedBy(model=row[5], output=row[6], at=row[7]))

    def put(self, pair: JudgedPair, verdict: Verdict) -> None:
        """Store (or replace) the verdict for ``pair`` with who answered it; query and URL are
        kept for inspection."""
        self._execute(
            _UPSERT_VERDICT,
            (
                pair.key,
                verdict.rating,
                verdict.label,
                verdict.reasoning,
                json.dumps(verdict.gates, sort_keys=True),
                verdict.reply,
                verdict.served_by.model,
                verdict.served_by.output,
                pair.model,
                pair.prompt_version,
                pair.query,
                pair.normalized_url,
                time.time(),
            ),
        )

    def get_profile(self, query: ProfiledQuery) -> str | None:
        """The stored profile (JSON text) for ``query``, or None."""
        row = self._execute("SELECT profile FROM profiles WHERE key = ?", (query.key,)).fetchone()
        return None if row is None else str(row[0])

    def adopt_profile(self, query: ProfiledQuery, profile: str) -> str:
        """Store ``profile`` unless one is stored already; returns the stored one."""
        self._execute(_INSERT_PROFILE, (query.key, profile, query.model, query.prompt_version,
                                        query.query, time.time()))
        stored = self.get_profile(query)
        return profile if stored is None else stored

    def __len__(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM verdicts_v2", ()).fetchone()[0])

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = self._pid = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
