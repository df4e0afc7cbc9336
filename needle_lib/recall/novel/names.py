"""Opaque identifiers: pronounceable nonsense that no training corpus can have taught a model.

Every local, parameter, function and constant name contains an underscore or a digit, so no
generated name can ever be a keyword or builtin of any flavour's language (Python,
TypeScript), whichever version parses it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

_ONSETS = (
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
    "br", "dr", "gr", "kl", "pl", "tr", "sk", "st", "zh", "qu", "th", "vr",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "o", "ae", "ou", "y")
_CODAS = ("", "", "", "k", "n", "r", "x", "th", "l", "m", "s", "v", "z")
_LETTERS = "bcdfghjklmnpqrstvwxz"


def word(rng: random.Random, syllables: int) -> str:
    """A lowercase nonsense word, e.g. ``tarnix``."""
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
    return "".join(parts) + rng.choice(_CODAS)


def token(rng: random.Random) -> str:
    """A short opaque tag such as ``qv7``: two consonants and a digit."""
    return rng.choice(_LETTERS) + rng.choice(_LETTERS) + str(rng.randrange(10))


def local_name(rng: random.Random) -> str:
    """A variable or parameter name: ``tarn7``, ``vexo_3`` or ``qv7_dor``.

    Short on purpose: a local recurs on many lines, and every character of an opaque name
    costs about half a token, so long locals would spend the context on names alone.
    """
    form = rng.randrange(4)
    if form < 2:
        return f"{word(rng, 1)}{rng.randrange(2, 10)}"
    if form == 2:
        return f"{word(rng, 1)}_{rng.randrange(2, 10)}"
    return f"{token(rng)}_{word(rng, 1)}"


def function_stem(rng: random.Random) -> str:
    """The part of a function name a decoy shares with its target: ``zorvak_plinth``."""
    return f"{word(rng, 2)}_{word(rng, rng.randint(1, 2))}"


def function_name(rng: random.Random) -> str:
    """A distractor function name in one of the shapes targets also use."""
    stem = function_stem(rng)
    return f"{stem}_{rng.randrange(2, 99)}" if rng.randrange(2) else stem


def class_name(rng: random.Random) -> str:
    """A CamelCase class name with a digit inside, e.g. ``Vorlax7Quen``."""
    return f"{word(rng, 2).capitalize()}{rng.randrange(2, 10)}{word(rng, 1).capitalize()}"


def constant_name(rng: random.Random) -> str:
    """A module constant such as ``KORVE_Q7``."""
    return f"{word(rng, 2).upper()}_{token(rng).upper()}"


class NameRegistry:
    """Names already taken in one corpus file, so every definition there is unique.

    Duplicate name + signature pairs make a target unanswerable; unique names rule that
    out for distractors too. Claims redraw on a clash, which is deterministic because the
    RNG stream is.
    """

    def __init__(self) -> None:
        self._taken: dict[str, None] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def reserve(self, name: str) -> None:
        if name in self._taken:
            raise ValueError(f"generated name {name!r} is defined twice")
        self._taken[name] = None

    def claim(self, rng: random.Random, make: Callable[[random.Random], str]) -> str:
        """Draw names from ``make(rng)`` until one is free, then reserve it."""
        while True:
            name = make(rng)
            if name not in self._taken:
                self._taken[name] = None
                return name
