"""What a query's words are, and which queries are not worth tokenizing at all.

Rare-word queries should be rare because of a real name or term, not because they carry a
machine identifier: VINs, hex digests and crypto addresses split into dozens of WordPiece
pieces but test no search engine's knowledge, and URLs are navigation, not search. A
non-Latin script is out of scope for an English bench.
"""

from __future__ import annotations

import re

_NON_WORD = re.compile(r"[^\w\s]")
_URLISH = re.compile(r"https?://|www\.|\.(com|org|net|io|de|fr|ru|jp)(\b|/)", re.I)
_VIN = re.compile(r"^[A-HJ-NPR-Z0-9]{17}$", re.I)
_HEX = re.compile(r"^(0x[0-9a-f]{40}|[0-9a-f]{24,})$", re.I)
_BASE58 = re.compile(r"^[1-9A-HJ-NP-Za-km-z]{32,44}$")
#: Basic Latin through Latin Extended-B, Latin Extended Additional, general punctuation and
#: currency symbols: what English text (names with accents included) is written in.
_LATIN_RANGES = ((0x20, 0x24F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20CF))


def words_for(query: str) -> list[str]:
    """Lowercased words, punctuation as separators."""
    return _NON_WORD.sub(" ", query.lower()).split()


def length_bucket(n_words: int) -> str:
    return "short" if n_words <= 2 else "medium" if n_words <= 5 else "long"


def url_like(query: str) -> bool:
    return _URLISH.search(query) is not None


def _latin(char: str) -> bool:
    code = ord(char)
    return char in "\t\n\r" or any(low <= code <= high for low, high in _LATIN_RANGES)


def _has_letter_and_digit(token: str) -> bool:
    return any(c.isalpha() for c in token) and any(c.isdigit() for c in token)


def _machine_id(token: str) -> bool:
    if _VIN.match(token) and _has_letter_and_digit(token):
        return True
    if _HEX.match(token) and (token.lower().startswith("0x") or re.search(r"[a-f]", token, re.I)):
        return True
    return bool(_BASE58.match(token)) and (
        any(c.isdigit() for c in token) and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


def ineligible(query: str) -> str | None:
    """Why ``query`` is out of scope (non-Latin script, VIN, hex hash, crypto address)."""
    if not all(_latin(c) for c in query):
        return "non-Latin characters"
    for token in query.split():
        if _machine_id(token.strip(".,;:!?()[]{}\"'")):
            return f"machine identifier {token!r}"
    return None
