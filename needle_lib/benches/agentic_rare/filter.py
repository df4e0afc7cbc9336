"""The rare-word filter: which queries of an agent query stream make the agentic_rare bench.

A query is kept when, in order:
1. it is 1–200 characters (``bad_length``), not URL-like (``urlish``), at least 3 words
   (``too_few_words``), no word longer than 40 characters (``long_word``), and free of
   non-Latin script and machine identifiers (``ineligible``);
2. it has a rare word: one with a letter that WordPiece splits into ≥ 5 pieces or cannot
   spell (``no_rare_word``);
3. it is English (``non_english``): the whole query and its ordinary (non-rare) words are
   not confidently another language (p ≥ 0.7); then either the ordinary words are
   confidently English (p ≥ 0.5), or at least 60 % of their alphabetic ones are common
   English words (Zipf ≥ 3.0). Rare words are left out of the last two checks because a
   name like "Llanfairpwllgwyngyll" would sway them.
Finally an n-gram cap removes near-copies (agents re-issue a query with small edits): rows
are visited rarest first, and a row is dropped (``ngram_dup``) when one of its word 3-grams
was already used twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from needle_lib.benches.agentic_rare.language import Identify, Zipf
from needle_lib.benches.agentic_rare.wordpiece import UNKNOWN, Tokenize
from needle_lib.benches.agentic_rare.words import (
    ineligible,
    length_bucket,
    url_like,
    words_for,
)
from needle_lib.jsonio import JSONObject

UNKNOWN_PIECES = 99  # how an unspellable word ranks: rarer than any split


@dataclass(frozen=True)
class FilterPolicy:
    max_query_chars: int = 200
    min_words: int = 3
    max_word_chars: int = 40
    subword_threshold: int = 5
    foreign_confidence: float = 0.7
    english_confidence: float = 0.5
    common_share: float = 0.6
    common_zipf: float = 3.0
    ngram: int = 3
    ngram_max: int = 2
    any_language: bool = False


class RareFilter:
    """Decides one query at a time; ``stats`` counts kept rows and every drop reason."""

    def __init__(self, tokenize: Tokenize, identify: Identify | None, zipf: Zipf | None,
                 policy: FilterPolicy = FilterPolicy()) -> None:
        if not policy.any_language and (identify is None or zipf is None):
            raise ValueError("the English gate needs a language identifier and word frequencies")
        self.tokenize = tokenize
        self.identify = identify
        self.zipf = zipf
        self.policy = policy
        self.stats: Counter[str] = Counter()

    def hard_words(self, words: list[str]) -> dict[str, list[str]]:
        """The query's hard words (in order), each with its subword pieces."""
        hard = {}
        for word in dict.fromkeys(words):
            if not any(c.isalpha() for c in word):
                continue
            pieces = self.tokenize(word)
            if UNKNOWN in pieces or len(pieces) >= self.policy.subword_threshold:
                hard[word] = list(pieces)
        return hard

    def english(self, query: str, context: list[str]) -> bool:
        assert self.identify is not None and self.zipf is not None
        policy = self.policy
        lang, p = self.identify(query)
        if lang != "en" and p >= policy.foreign_confidence:
            return False
        if context:
            lang, p = self.identify(" ".join(context))
            if lang != "en" and p >= policy.foreign_confidence:
                return False
            if lang == "en" and p >= policy.english_confidence:
                return True
        alphabetic = [w for w in context if w.isalpha()]
        if not alphabetic:
            return True
        common = sum(self.zipf(w) >= policy.common_zipf for w in alphabetic)
        return common >= policy.common_share * len(alphabetic)

    def reject_reason(self, query: str, words: list[str]) -> str | None:
        policy = self.policy
        if not query or len(query) > policy.max_query_chars:
            return "bad_length"
        if url_like(query):
            return "urlish"
        if len(words) < policy.min_words:
            return "too_few_words"
        if any(len(w) > policy.max_word_chars for w in words):
            return "long_word"
        if ineligible(query):
            return "ineligible"
        return None

    def columns(self, query: str) -> JSONObject | None:
        """The added columns for a kept query; None (and a counted reason) for a dropped one."""
        query = " ".join(query.split())
        words = words_for(query)
        reason = self.reject_reason(query, words)
        hard = {} if reason else self.hard_words(words)
        if reason is None and not hard:
            reason = "no_rare_word"
        if (reason is None and not self.policy.any_language
                and not self.english(query, [w for w in words if w not in hard])):
            reason = "non_english"
        if reason is not None:
            self.stats[reason] += 1
            return None
        return {
            "length_bucket": length_bucket(len(words)),
            "n_words": len(words),
            "hard_words": [{"word": word, "subwords": [piece for piece in pieces]}  # JSON list
                           for word, pieces in hard.items()],
            "max_pieces": max(UNKNOWN_PIECES if UNKNOWN in pieces else len(pieces)
                              for pieces in hard.values()),
        }


def ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    """Word n-grams; the whole word tuple when there are fewer than ``n`` words."""
    if len(words) < n:
        return [tuple(words)]
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def ngram_cap(rows: list[JSONObject], *, query_field: str, n: int,
              max_uses: int) -> tuple[list[JSONObject], int]:
    """Rows kept rarest first while none of their n-grams is used more than ``max_uses``
    times; returns (kept, dropped count). Ties keep stream order (a stable sort)."""
    used: Counter[tuple[str, ...]] = Counter()
    kept = []
    for row in sorted(rows, key=lambda r: -_count(r, "max_pieces")):
        grams = ngrams(words_for(str(row[query_field])), n)
        if any(used[g] >= max_uses for g in grams):
            continue
        used.update(grams)
        kept.append(row)
    return kept, len(rows) - len(kept)


def filter_stream(rows: Iterable[JSONObject], rare: RareFilter, *,
                  query_field: str) -> Iterator[JSONObject]:
    """The stream's rows that pass, each with the added columns (other columns pass through).

    A row without a text ``query_field`` is counted as ``bad_length``.
    """
    for row in rows:
        text = row.get(query_field)
        if not isinstance(text, str):
            rare.stats["bad_length"] += 1
            continue
        columns = rare.columns(text)
        if columns is not None:
            yield {**row, query_field: " ".join(text.split()), **columns}


def finish(rows: list[JSONObject], rare: RareFilter, *,
           query_field: str) -> list[JSONObject]:
    """The n-gram cap, then the artifact's order: by length bucket, rarest first."""
    policy = rare.policy
    kept, dropped = ngram_cap(rows, query_field=query_field, n=policy.ngram,
                              max_uses=policy.ngram_max)
    rare.stats["ngram_dup"] += dropped
    rare.stats["kept"] += len(kept)
    return sorted(kept, key=lambda r: (str(r["length_bucket"]), -_count(r, "max_pieces")))


def _count(row: JSONObject, column: str) -> int:
    """A count column this filter added (``columns``): an int."""
    value = row[column]
    if not isinstance(value, int):
        raise TypeError(f"{column} is {value!r}, not a count")
    return value
