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

from needle_lib.judge import CacheError, JudgeCache, JudgedPair, Verdict

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


@pytest.mark.parametrize("field", ["model", "prompt_version", "query", "url", "title", "snippet"])
def test_every_identity_field_is_in_the_key(cache: JudgeCache, field: str) -> None:
    cache.put(PAIR, VERDICT)
    other = dataclasses.replace(PAIR, **{field: getattr(PAIR, field) + "-other"})
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
    from needle_lib.judge import JudgeCache, JudgedPair, Verdict

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
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    with JudgeCache(path) as cache:
        assert len(cache) == 3 * count + count  # own rows per worker + one shared set
        shared = cache.get(JudgedPair("m", "v1", "shared-7", "https://x.com/7", "t", "s"))
        assert shared is not None and shared.reasoning in {"w1", "w2", "w3"}
