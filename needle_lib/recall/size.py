"""Recall prompt sizes in tokens: per case, per corpus, and which shipped corpus fits.

Every prompt of a corpus is the shared preamble (which holds the corpus) plus a short task.
The preamble ends in a run of newlines, where BPE pre-tokenizers split, so a prompt's count
is the preamble's plus the task's: a corpus is tokenized once per process, not once per case
(a test pins the sum to the whole prompt's count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from needle_lib.recall.corpus import Corpus, configured_corpus_names, load_corpus, resolve_corpus
from needle_lib.recall.prompt import corpus_preamble, task_text
from needle_lib.recall.repo import TASK_ROOM
from needle_lib.recall.targets import Target
from needle_lib.tokens import ANSWER_ROOM, REFERENCE, counted_tokens
from needle_lib.tomlconf import ConfigError


@dataclass(frozen=True)
class PromptTokens:
    """The shortest and the longest prompt of a corpus (they differ only in the task)."""

    min: int
    max: int

    def to_json(self) -> dict[str, int]:
        return {"min": self.min, "max": self.max}


@lru_cache(maxsize=16)
def preamble_tokens(corpus: Corpus, tokenizer: str = REFERENCE) -> int:
    return counted_tokens(corpus_preamble(corpus), tokenizer)


def prompt_tokens(
    corpus: Corpus, target: Target, *, no_think: bool, tokenizer: str = REFERENCE
) -> int:
    """Tokens of ``build_prompt(corpus, target, no_think=no_think)`` under ``tokenizer``."""
    task = task_text(corpus, target, no_think=no_think)
    return preamble_tokens(corpus, tokenizer) + counted_tokens(task, tokenizer)


def prompt_range(
    corpus: Corpus, targets: Sequence[Target], tokenizer: str = REFERENCE
) -> PromptTokens:
    """The smallest and largest prompt over ``targets``, with the ``/no_think`` suffix (the
    longest form any model config sends)."""
    counts = [prompt_tokens(corpus, t, no_think=True, tokenizer=tokenizer) for t in targets]
    return PromptTokens(min(counts), max(counts))


def shipped_sizes(task_tokens: int) -> dict[str, int]:
    """Every configured corpus → its prompt size, given a task of ``task_tokens``.

    Only the corpus text is read (no parsing), so this is cheap enough for an error path;
    a corpus whose config or files cannot be read is left out.
    """
    sizes = {}
    for name in configured_corpus_names():
        try:
            corpus = load_corpus(resolve_corpus(name))
        except (ConfigError, OSError, UnicodeDecodeError):
            continue
        sizes[name] = preamble_tokens(corpus) + task_tokens
    return sizes


def budget_for(limit: int, estimate: int | None = None, server_count: int | None = None) -> int:
    """The ``--max-prompt-tokens`` that fits a ``limit``-token context: ``ANSWER_ROOM`` left
    for the answer, shrunk by how much more the server's tokenizer counted than ours, and
    rounded down to 256 (a number a person types)."""
    budget = limit - ANSWER_ROOM
    if estimate and server_count and server_count > estimate:
        budget = budget * estimate // server_count
    return max(budget // 256 * 256, 0)


@dataclass(frozen=True)
class OverflowAdvice:
    """What an overflow's message adds for a recall corpus: its size and what fits, and
    the fix to lead with (None: reloading the model with a larger context comes first)."""

    facts: str
    first_fix: str | None


def fit_advice(
    estimate: int, task_tokens: int, limit: int | None, *, own_code: bool = False,
    server_count: int | None = None,
) -> OverflowAdvice:
    """The corpus's own size and, when the server's limit is known, what fits it: for
    the user's own code (``own_code``: ``--repo``, ``[repo]``), the ``--max-prompt-tokens``
    that fits; else the shipped corpora whose prompt fits with ``ANSWER_ROOM`` to spare,
    smallest first (the last is the largest run this server can take) — and when none
    does, the user's own code sized to fit, which is the one run a small-context server
    can make."""
    own = f"this corpus's prompt ≈ {estimate:,} tokens ({REFERENCE})"
    if limit is None:
        return OverflowAdvice(own, None)
    room = (f"{indefinite_article(limit)} {limit:,}-token context with {ANSWER_ROOM:,} "
            f"tokens left for the answer")
    budget = budget_for(limit, estimate, server_count)
    if budget <= TASK_ROOM:
        return OverflowAdvice(f"{own}; {room} leaves no room for a corpus", None)
    if own_code:
        return OverflowAdvice(own, f"rerun with `--max-prompt-tokens {budget}` (fits {room})")
    fitting = sorted(
        (tokens, name)
        for name, tokens in shipped_sizes(task_tokens).items()
        if tokens + ANSWER_ROOM <= limit
    )
    yours = f"`--repo PATH --max-prompt-tokens {budget}` (your own code, sized to fit)"
    if not fitting:
        return OverflowAdvice(f"{own}; no shipped corpus fits {room}", yours)
    names = ", ".join(f"{name} (≈ {tokens:,} tokens)" for tokens, name in fitting)
    return OverflowAdvice(
        f"{own}; shipped corpora that fit {room}, smallest first: {names}; or {yours}", None
    )


def indefinite_article(number: int) -> str:
    """"an" before a number read aloud with a vowel sound (an 8,192-, an 11,000-, an
    18,432-token context), else "a". Only the leading digit group is spoken first."""
    lead = f"{number:,}".split(",")[0]
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
