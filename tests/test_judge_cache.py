"""Verdict cache: keying, persistence, WAL, and several processes writing one file at once."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from needle_lib.judge.cache import CacheError, JudgeCache, JudgedPair, ProfiledQuery
from needle_lib.judge.verdict import Verdict

PAIR = JudgedPair(
    model="test/judge",
    prompt_version="v1",
    query="mars rover landing",
    url="https://www.x.com/a/",
    title="Rover lands",
    snippet="The rover touched down at 04:12 UTC.",
)
VERDICT = Verdict(rating=3, label="HM", reasoning="Covers the landing.")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[JudgeCache]:
    with JudgeCache(tmp_path / "judge.sqlite3") as opened:
        yield opened


def test_roundtrip_marks_cached(cache: JudgeCache) -> None:
    assert cache.get(PAIR) is None
    cache.put(PAIR, VERDICT)
    assert cache.get(PAIR) == dataclasses.replace(VERDICT, cached=True)


def test_gates_survive_the_roundtrip(cache: JudgeCache) -> None:
    gated = dataclasses.replace(VERDICT, gates={"freshness": "fail", "integrity": "pass"})
    cache.put(PAIR, gated)
    assert cache.get(PAIR) == dataclasses.replace(gated, cached=True)


def test_the_first_stored_profile_wins(cache: JudgeCache) -> None:
    query = ProfiledQuery("m", "p1", "mars rover landing")
    assert cache.get_profile(query) is None
    assert cache.adopt_profile(query, '{"query_type": "specific"}') == '{"query_type": "specific"}'
    assert cache.adopt_profile(query, '{"query_type": "broad"}') == '{"query_type": "specific"}'
    assert cache.get_profile(dataclasses.replace(query, prompt_version="p2")) is None


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(JudgedPair)])
def test_every_identity_field_is_in_the_key(cache: JudgeCache, field: str) -> None:
    cache.put(PAIR, VERDICT)
    other = dataclasses.replace(PAIR, **{field: (getattr(PAIR, field) or "") + "-other"})
    assert other.key != PAIR.key
    assert cache.get(other) is None


def test_url_spellings_of_one_page_share_an_entry(cache: JudgeCache) -> None:
    cache.put(PAIR, VERDICT)
    for url in ("http://x.com/a", "https://X.com/a#top", "https://x.com/a?utm_source=feed"):
        assert cache.get(dataclasses.replace(PAIR, url=url)) is not None, url


def test_key_is_a_sha256_hex_digest() -> None:
    assert len(PAIR.key) == 64 and int(PAIR.key, 16) >= 0


def test_upsert_replaces_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "judge.sqlite3"
    with JudgeCache(path) as first:
        first.put(PAIR, VERDICT)
        first.put(PAIR, Verdict(rating=4, label="FullyM", reasoning="Better."))
        assert len(first) == 1
    with JudgeCache(path) as second:
        assert second.get(PAIR) == Verdict(4, "FullyM", "Better.", cached=True)


def test_file_is_in_wal_mode(cache: JudgeCache) -> None:
    cache.put(PAIR, VERDICT)
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unusable_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match=r"judge\.sqlite3"):
        JudgeCache(path).get(PAIR)


def test_two_instances_interleave_on_one_file(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite3"
    with JudgeCache(path) as a, JudgeCache(path) as b:
        for i in range(20):
            (a if i % 2 else b).put(dataclasses.replace(PAIR, query=f"q{i}"), VERDICT)
        assert len(a) == len(b) == 20
        assert b.get(dataclasses.replace(PAIR, query="q1")) is not None


_WRITER = textwrap.dedent(
    """
    import sys
    from needle_lib.judge.cache import JudgeCache, JudgedPair
    from needle_lib.judge.verdict import Verdict

    path, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cache = JudgeCache(path)
    for i in range(count):
        for query in (f"{worker}-{i}", f"shared-{i}"):
            pair = JudgedPair("m", "v1", query, f"https://x.com/{i}", "t", "s")
            cache.put(pair, Verdict(i % 5, "label", worker))
            assert cache.get(pair) is not None
    cache.close()
    """
)


def test_processes_write_one_file_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite3"
    count = 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), worker, str(count)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in ("w1", "w2", "w3")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    with JudgeCache(path) as cache:
        assert len(cache) == 3 * count + count  # own rows per worker + one shared set
        shared = cache.get(JudgedPair("m", "v1", "shared-7", "https://x.com/7", "t", "s"))
        assert shared is not None and shared.reasoning in {"w1", "w2", "w3"}


# --- opening under contention ------------------------------------------------------------

_OPENER = textwrap.dedent(
    """
    import sys
    from needle_lib.judge.cache import JudgeCache, JudgedPair
    from needle_lib.judge.verdict import Verdict

    root, worker, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)
    for round_ in range(rounds):
        if sys.stdin.readline().strip() != "go":
            break
        try:
            with JudgeCache(f"{root}/round{round_}.sqlite3") as cache:
                pair = JudgedPair("m", "v1", f"q-{worker}", "https://x.com/", "t", "s")
                cache.put(pair, Verdict(1, "SM", worker))
                print("ok" if cache.get(pair) is not None else "missing", flush=True)
        except Exception as exc:
            print(f"error {type(exc).__name__}: {exc}", flush=True)
    """
)
_BURNER = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass\n"


def test_eight_processes_open_one_fresh_cache_at_once_under_cpu_load(tmp_path: Path) -> None:
    """The xdist start-up race: every worker opens the same brand-new file at one moment.

    Each round releases eight ready processes onto a fresh file together (one line each on
    their stdin), while two busy loops keep both cores saturated. Before opening retried
    lock contention, one of them would get "database is locked" from the WAL switch.
    """
    rounds, workers = 8, 8
    burners = [subprocess.Popen([sys.executable, "-c", _BURNER]) for _ in range(2)]
    openers: list[subprocess.Popen[str]] = []
    try:
        openers = [
            subprocess.Popen(
                [sys.executable, "-c", _OPENER, str(tmp_path), str(worker), str(rounds)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
            for worker in range(workers)
        ]
        assert [proc.stdout.readline().strip() for proc in openers] == ["ready"] * workers
        for _ in range(rounds):
            for proc in openers:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            answers = [proc.stdout.readline().strip() for proc in openers]
            assert answers == ["ok"] * workers, answers
        for proc in openers:
            proc.stdin.close()
            assert proc.wait(timeout=600) == 0
    finally:
        for proc in [*burners, *openers]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for round_ in range(rounds):
        with sqlite3.connect(tmp_path / f"round{round_}.sqlite3") as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("SELECT COUNT(*) FROM verdicts_v2").fetchone()[0] == workers


def test_opening_retries_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    """Deterministic version of the race: the lock is released only once the cache backs off."""
    path = tmp_path / "judge.sqlite3"
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    waits: list[float] = []

    def back_off(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            blocker.execute("COMMIT")

    cache = JudgeCache(path, busy_timeout=0.05, sleep=back_off, clock=lambda: 0.0)
    cache.put(PAIR, VERDICT)
    assert cache.get(PAIR) is not None
    assert len(waits) == 2 and waits[1] == 2 * waits[0]  # exponential backoff
    cache.close()
    blocker.close()


def test_a_lock_that_outlives_the_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite3"
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    now = [0.0]

    def advance(seconds: float) -> None:
        now[0] += seconds

    cache = JudgeCache(path, busy_timeout=0.05, sleep=advance, clock=lambda: now[0])
    with pytest.raises(CacheError, match=r"judge\.sqlite3.*locked by other processes"):
        cache.get(PAIR)
    blocker.execute("COMMIT")
    blocker.close()
    assert cache.get(PAIR) is None  # a later attempt opens it fine
    cache.close()
