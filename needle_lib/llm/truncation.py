"""Recognise a prompt the server silently cut to fit its context, and say how to fix it.

Some servers do not refuse a prompt longer than their loaded context: Ollama's
OpenAI-compatible endpoint keeps only the last ``num_ctx`` tokens (2,048–4,096 by default,
and ``num_ctx`` cannot be passed through that endpoint), llama.cpp with context shift does
the same, and both answer normally, with at most a warning in the server's own log. The
model never saw the start of the corpus, so scoring its answer would charge the server's
configuration to the model. The one trace in the answer is ``usage.prompt_tokens``: when it
is far below the prompt's size under the reference tokenizer, the prompt was cut.

Unless the prefix was cached: several servers then count only the tokens they newly
evaluated (Ollama did, was fixed, and did again with its llama-server runner), or report
the cached part apart. Cached tokens are added back where reported; a count no larger than
the uncached tail (the task text) is a cache hit, recorded as such, never a truncation.
"""

from __future__ import annotations

from enum import StrEnum

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.llm.overflow import suggested_context
from needle_lib.tokens import REFERENCE

#: Below this share of the estimate, the server saw a cut prompt. Other vocabularies count
#: the same code within a few per cent to ~15 % of the reference (the two Qwen vocabularies
#: differ by 3–8 % on the shipped corpora), while a truncated long prompt keeps a small
#: fraction of it; a chat template only adds tokens.
TRUNCATION_RATIO = 0.8


#: Beyond the uncached tail, what a cache-only count may still include: chat-template
#: tokens and the re-evaluation from the last cache block boundary (vLLM blocks are 16
#: tokens; llama.cpp re-evaluates at least the final token). A truncated prompt reports a
#: context-sized count (2,048, 4,096, …), far above any task text plus this slack.
CACHE_SLACK = 512


class PromptCount(StrEnum):
    """What a server's prompt count covered, recorded per case (``prompt_count``)."""

    #: The count covers the whole prompt (cached tokens included where reported).
    FULL = "full"
    #: Only the tokens the server newly evaluated: the shared prefix came from its cache
    #: and the server did not report the cached part (Ollama's llama-server runner).
    CACHE_HIT = "cache_hit"


def _count(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def served_prompt_tokens(usage: JSONObject | None,
                         timings: JSONObject | None = None) -> int | None:
    """The prompt size the server reports, or None when it reports none (0 means none too:
    some servers send 0 rather than omit the field).

    OpenAI's ``prompt_tokens`` includes the cached part (``prompt_tokens_details.
    cached_tokens``), so a cached count above it can only mean a server that reports the
    two apart (some Ollama builds): then the prompt is their sum, not a cut prompt.
    llama.cpp's ``timings`` splits the prompt into ``cache_n`` reused and ``prompt_n``
    evaluated tokens; their sum is the prompt whatever ``prompt_tokens`` says.
    """
    if not isinstance(usage, dict):
        return None
    value = _count(usage.get("prompt_tokens"))
    if value is None or value <= 0:
        return None
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is not None and cached > value:
        value += cached
    if isinstance(timings, dict):
        reused, evaluated = _count(timings.get("cache_n")), _count(timings.get("prompt_n"))
        if reused is not None and evaluated is not None:
            value = max(value, reused + evaluated)
    return value


def prompt_count(served: int, estimated: int, tail: int | None) -> PromptCount | None:
    """What ``served`` tokens of an ``estimated``-token prompt covered; None for a prompt
    the server cut. ``tail`` is the prompt's part after the prefix it shares with the
    pair's other cases, the most a prefix cache leaves to evaluate."""
    if served >= estimated * TRUNCATION_RATIO:
        return PromptCount.FULL
    if tail is not None and served <= tail + CACHE_SLACK:
        return PromptCount.CACHE_HIT
    return None


def explain_truncation(*, served: int, estimated: int, max_tokens: int | None) -> str:
    """The PromptTruncatedError message: both figures, why it is an error, the fixes."""
    ctx = suggested_context(estimated, max_tokens)
    return (
        f"the server silently truncated the prompt: it reports usage.prompt_tokens = {served:,}"
        f", but the prompt is ≈ {estimated:,} tokens ({REFERENCE}), so the model saw only "
        f"{100 * served / estimated:.0f} % of it; the answer is not scored. Fix: Ollama: "
        f"raise the context with `PARAMETER num_ctx {ctx}` in a Modelfile (`ollama create`) or "
        f"start the server with `OLLAMA_CONTEXT_LENGTH={ctx}` (num_ctx cannot be passed "
        f"through the OpenAI-compatible endpoint); llama.cpp: restart llama-server with "
        f"`--ctx-size {ctx}` and without `--context-shift`"
    )
