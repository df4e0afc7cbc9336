"""BERT WordPiece (bert-base-uncased) as the judge of which words are rare.

A word the vocabulary knows is one piece; a common inflection two or three; a rare name or
term shatters into many pieces or cannot be spelled at all (``[UNK]``). That is a cheap,
model-grounded proxy for "a search engine's index has seen this word rarely".
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from needle_lib.benches.agentic_rare.extra import require
from needle_lib.benches.agentic_rare.hub import VOCAB_FILE, VOCAB_REPO, hub_file
from needle_lib.tomlconf import ConfigError

Tokenize = Callable[[str], list[str]]
UNKNOWN = "[UNK]"
_CACHE_WORDS = 200_000


def vocab_path(explicit: Path | None) -> Path:
    """``--vocab`` if given, else bert-base-uncased's vocab.txt from the hub (cached)."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"--vocab {explicit}: file not found")
        return explicit
    return hub_file(VOCAB_REPO, VOCAB_FILE, repo_type=None, instead="--vocab vocab.txt")


def wordpiece(vocab: Path) -> Tokenize:
    """A cached word → pieces function over the WordPiece vocabulary in ``vocab``."""
    tokenizers = require("tokenizers")
    try:
        tokenizer = tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=True)
    except Exception as exc:  # the Rust side raises plain Exceptions for a bad file
        raise ConfigError(f"{vocab}: not a WordPiece vocabulary ({exc})") from None

    @lru_cache(maxsize=_CACHE_WORDS)
    def pieces(word: str) -> tuple[str, ...]:
        return tuple(tokenizer.encode(word, add_special_tokens=False).tokens)

    return lambda word: list(pieces(word))
