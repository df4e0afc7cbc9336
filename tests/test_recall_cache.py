"""The on-disk parse cache: a second call reads it, a damaged entry is re-parsed."""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_helpers import tmp_config, write_sources

from needle_lib.recall import cache
from needle_lib.recall.corpus import Corpus, load_corpus
from needle_lib.recall.extract import ParsedCorpus, parse_corpus

SOURCE = '''\
def first(a):
    """Doc."""
    # comment
    return a


async def second(b):

    return b
'''


class CountingParse:
    """Stands in for ``parse_corpus``; fails once ``allowed`` parses have been used."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.calls = 0

    def __call__(self, corpus: Corpus) -> ParsedCorpus:
        self.calls += 1
        if self.calls > self.allowed:
            raise AssertionError("parsed again although the cache holds this corpus")
        return parse_corpus(corpus)


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    directory = write_sources(tmp_path / "src", {"mod.py": SOURCE})
    return load_corpus(tmp_config(directory, "mod.py"))


def entry(cache_dir: Path, corpus: Corpus) -> Path:
    return cache_dir / "parsed" / f"{cache.cache_key(corpus)}.json"


def test_a_second_call_reads_the_cache(
    corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse = CountingParse(allowed=1)
    monkeypatch.setattr(cache, "parse_corpus", parse)
    cache_dir = tmp_path / "cache"
    first = cache.parsed_corpus(corpus, cache_dir)
    assert entry(cache_dir, corpus).is_file()
    second = cache.parsed_corpus(corpus, cache_dir)
    assert parse.calls == 1
    assert second == first == parse_corpus(corpus)
    assert [f.name for f in second.functions] == ["first", "second"]


@pytest.mark.parametrize(
    "damage",
    ["{not json", "", '{"functions": [{"name": "x"}], "kinds": []}', '{"kinds": []}', "[1, 2]"],
)
def test_a_damaged_entry_is_reparsed_and_rewritten(
    corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    cache_dir = tmp_path / "cache"
    path = entry(cache_dir, corpus)
    path.parent.mkdir(parents=True)
    path.write_text(damage, encoding="utf-8")
    parse = CountingParse(allowed=1)
    monkeypatch.setattr(cache, "parse_corpus", parse)
    assert cache.parsed_corpus(corpus, cache_dir) == parse_corpus(corpus)
    assert parse.calls == 1
    assert cache.parsed_corpus(corpus, cache_dir) == parse_corpus(corpus)
    assert parse.calls == 1  # the rewritten entry is read back


def test_the_key_follows_text_and_file_layout(corpus: Corpus, tmp_path: Path) -> None:
    reloaded = load_corpus(tmp_config(tmp_path / "src", "mod.py"))
    edited = write_sources(tmp_path / "edited", {"mod.py": SOURCE + "x = 1\n"})
    renamed = write_sources(tmp_path / "renamed", {"other.py": SOURCE})
    assert cache.cache_key(reloaded) == cache.cache_key(corpus)
    keys = {
        cache.cache_key(corpus),
        cache.cache_key(load_corpus(tmp_config(edited, "mod.py"))),
        cache.cache_key(load_corpus(tmp_config(renamed, "other.py"))),
    }
    assert len(keys) == 3
