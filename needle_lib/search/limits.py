"""Query-length limits: APIs that refuse a long query get its head, cut between words.

Benchmark queries can be long (a pasted paragraph, an LLM-written question), and several APIs
answer them with an HTTP 4xx instead of results (Brave: 50 words / 400 characters; Octen: 500
characters; Ceramic: 50 words). A refused query would count as a search error against the
engine, so we send the longest head that fits, cut at a word boundary, and keep any operator
clause (``site:`` terms) whole: the restriction matters more than the last few words.
"""

from __future__ import annotations


def clip_query(
    text: str,
    *,
    max_words: int | None = None,
    max_chars: int | None = None,
    keep: str = "",
) -> str:
    """``text`` (then ``keep``) cut so the whole is at most ``max_words`` / ``max_chars``.

    ``keep`` is appended whole and counts against both limits; only ``text`` is shortened,
    word by word. A lone first word longer than the character budget is cut inside itself
    rather than sending nothing. A quote left open by the cut is dropped.
    """
    original = text.split()
    words = list(original)
    kept = keep.split()
    if max_words is not None:
        words = words[: max(max_words - len(kept), 0)]
    if max_chars is not None:
        budget = max_chars - (len(keep) + 1 if keep else 0)
        first = words[0] if words else ""
        while words and len(" ".join(words)) > budget:
            words.pop()
        if not words and first and budget > 0:
            words = [first[:budget]]
    head = " ".join(words)
    if words != original and head.count('"') % 2:
        cut = head.rfind('"')
        head = f"{head[:cut]}{head[cut + 1:]}".strip()
    return " ".join(part for part in (head, keep) if part)
