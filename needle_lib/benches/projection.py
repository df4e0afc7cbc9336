"""LLM-projected queries anchored on a quoted span: reading the reply, checking the anchor.

Generators that ask an LLM for a known-item query (legal code sections; the same shape
suits filing and paper queries) want one line back, with exactly one double-quoted phrase
copied from the source document. An LLM may wrap the line in a code fence, prefix
"Query:", use typographic quotes, or invent the "verbatim" phrase, so the reply is read
leniently and the anchor checked strictly: the phrase must be in the document once quotes,
dashes, case and spacing are normalised on both sides.
"""

from __future__ import annotations

import re
import unicodedata

_SPAN = re.compile(r'"([^"]*)"')
_PLAIN = str.maketrans({
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u201a": "'",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
})


def normalise(text: str) -> str:
    """Compatibility forms folded, typographic quotes and dashes made plain, lowercased,
    whitespace collapsed: how a span and its document are compared."""
    folded = unicodedata.normalize("NFKC", text).translate(_PLAIN)
    return " ".join(folded.lower().split())


def read_reply(content: str, refusal: str) -> str | None:
    """The query in an LLM answer: its first non-empty line (code fences and a "Query:"
    label skipped, typographic quotes made plain). None is a refusal: the sentinel, or
    nothing at all."""
    line = next((ln.strip().strip("`").strip() for ln in content.splitlines()
                 if ln.strip().strip("`").strip()), "")
    if line.lower().startswith("query:"):
        line = line[len("query:"):].strip()
    line = " ".join(line.translate(_PLAIN).split())
    if not line or refusal in line.upper():
        return None
    return line


def quoted_spans(query: str) -> list[str]:
    return _SPAN.findall(query)


def span_problem(query: str, document: str, *, min_words: int, max_words: int) -> str | None:
    """Why ``query`` lacks exactly one quoted span of ``min_words``–``max_words`` words
    found verbatim in ``document``; None when it has one."""
    spans = quoted_spans(query)
    if len(spans) != 1 or query.count('"') != 2:
        return f"{query.count(chr(34))} double quotes (want exactly one quoted span)"
    words = len(spans[0].split())
    if not min_words <= words <= max_words:
        return f"quoted span of {words} words (want {min_words}-{max_words})"
    if normalise(spans[0]) not in normalise(document):
        return f"quoted span {spans[0]!r} is not in the document"
    return None


def unquoted(query: str) -> str:
    """The query with its quote marks dropped (the words kept)."""
    return " ".join(query.replace('"', " ").split())
