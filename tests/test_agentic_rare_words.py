"""agentic_rare pieces that need no optional dependency: words, scope checks, buckets, query
rows and sampling, and the one-line error for a missing extra."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from needle_lib.benches.agentic_rare.extra import require
from needle_lib.benches.agentic_rare.filter import ngram_cap, ngrams
from needle_lib.benches.agentic_rare.generate import sample_query_rows
from needle_lib.benches.agentic_rare.words import ineligible, length_bucket, url_like, words_for
from needle_lib.benches.rows import query_id
from needle_lib.tomlconf import ConfigError

NOW = datetime(2026, 7, 2, 6, 17, tzinfo=UTC)


def test_words_are_lowercased_and_split_on_punctuation() -> None:
    assert words_for("What's the Quokka's range?") == ["what", "s", "the", "quokka", "s",
                                                       "range"]


@pytest.mark.parametrize(("n", "bucket"), [(1, "short"), (2, "short"), (3, "medium"),
                                           (5, "medium"), (6, "long")])
def test_length_buckets(n: int, bucket: str) -> None:
    assert length_bucket(n) == bucket


@pytest.mark.parametrize("query", ["see https://x.org/a", "www.quokka", "quokka.com facts",
                                   "docs at example.io/start"])
def test_url_like(query: str) -> None:
    assert url_like(query)


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("Pokémon Crêpe café in Zürich", None),
        ("quokka “quoted” range – 2026 €5", None),
        ("the 日本 quokka news", "non-Latin"),
        ("where is Ελλάδα", "non-Latin"),
        ("1HGCM82633A004352 recall history", "machine identifier"),
        ("commit a3f5c9d2e8b14f6a7c0d9e2b1f4a6c8d history", "machine identifier"),
        ("tx 0x" + "ab12" * 10 + " status", "machine identifier"),
        ("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa wallet balance", "machine identifier"),
        ("ABCDEFGHJKLMNPRST is all letters", None),  # 17 letters, no digit: not a VIN
        ("deadbeefdeadbeefdeadbeef0", "machine identifier"),
        ("123456789012345678901234567 digits only", None),  # no a-f: a number, not a hash
    ],
)
def test_scope(query: str, why: str | None) -> None:
    reason = ineligible(query)
    assert (reason is None) if why is None else (why in (reason or ""))


def test_ngrams_of_short_queries_are_the_whole_query() -> None:
    assert ngrams(["a", "b"], 3) == [("a", "b")]
    assert ngrams(["a", "b", "c", "d"], 3) == [("a", "b", "c"), ("b", "c", "d")]


def test_ngram_cap_keeps_the_rarest_two_of_each_trigram() -> None:
    rows = [
        {"q": "how does the quokka work", "max_pieces": 6},
        {"q": "how does the quokka sleep", "max_pieces": 9},
        {"q": "how does the quokka eat", "max_pieces": 99},
        {"q": "where is the numbat found", "max_pieces": 7},
    ]
    kept, dropped = ngram_cap(rows, query_field="q", n=3, max_uses=2)
    assert [r["q"] for r in kept] == ["how does the quokka eat", "how does the quokka sleep",
                                      "where is the numbat found"]
    assert dropped == 1


ARTIFACT = [
    {"query_text": f"medium rare query {i}", "length_bucket": "medium", "source": "drg",
     "metadata": {"session_id": f"s{i}"},
     "hard_words": [{"word": "quokka", "subwords": ["q", "##u"]}], "max_pieces": 6}
    for i in range(6)
] + [
    {"query_text": f"a long rare query number {i}", "length_bucket": "long", "source": "lrat",
     "metadata": None, "hard_words": [], "max_pieces": 5}
    for i in range(2)
]


def test_query_rows_carry_identity_origin_and_bucket() -> None:
    rows = sample_query_rows(ARTIFACT, now=NOW, limit=0, seed=1)
    assert len(rows) == 8
    first = rows[0]
    assert first["query_id"] == query_id("medium rare query 0", NOW)
    assert first["query_text"] == "medium rare query 0"
    assert first["query_source"] == "agentic_rare" and first["length_bucket"] == "medium"
    assert first["hour_ts"] == "2026-07-02T06:00:00+00:00"
    assert first["query_origin"] == {
        "bucket": "agentic_rare", "subcategory": "rare_medium",
        "provenance": {"producer": "agentic_rare", "source": "drg",
                       "metadata": {"session_id": "s0"}, "hard_words": ARTIFACT[0]["hard_words"]},
    }


def test_sampling_is_stratified_and_deterministic_for_a_seed() -> None:
    rows = sample_query_rows(ARTIFACT, now=NOW, limit=4, seed=3)
    assert sorted(r["length_bucket"] for r in rows) == ["long", "long", "medium", "medium"]
    assert rows == sample_query_rows(ARTIFACT, now=NOW, limit=4, seed=3)
    draws = {tuple(r["query_id"] for r in sample_query_rows(ARTIFACT, now=NOW, limit=3,
                                                            seed=s)) for s in range(8)}
    assert len(draws) > 1


def test_a_row_without_text_is_named() -> None:
    with pytest.raises(ConfigError, match=r"row 2 has no 'query_text' text"):
        sample_query_rows([ARTIFACT[0], {"length_bucket": "long"}], now=NOW, limit=0, seed=1)


def test_a_missing_extra_is_one_line_saying_how_to_install_it() -> None:
    with pytest.raises(ConfigError) as info:
        require("needle_no_such_module")
    message = str(info.value)
    assert "uv sync --extra rare" in message and "\n" not in message
