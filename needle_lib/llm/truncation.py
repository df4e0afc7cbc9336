"""Recognise a prompt the server silently cut to fit its context, and say how to fix it.

Some servers do not refuse a prompt longer than their loaded context: Ollama's
OpenAI-compatible endpoint keeps only the last ``num_ctx`` tokens (2,048–4,096 by default,
and ``num_ctx`` cannot be passed through that endpoint), llama.cpp with context shift does
the same, and both answer normally, with at most a warning in the server's own log. The
model never saw the start of the corpus, so scoring its answer would charge the server's
configuration to the model. The one trace in the answer is ``usage.prompt_tokens``: when it
is far below the prompt's size under the reference tokenizer, the prompt was cut.
"""

from __future__ import annotations

from typing import Any

from needle_lib.llm.overflow import suggested_context
from needle_lib.tokens import REFERENCE

#: Below this share of the estimate, the server saw a cut prompt. Other vocabularies count
#: the same code within a few per cent to ~15 % of the reference (the two Qwen vocabularies
#: differ by 3–8 % on the shipped corpora), while a truncated long prompt keeps a small
#: fraction of it; a chat template only adds tokens.
TRUNCATION_RATIO = 0.8


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def served_prompt_tokens(usage: dict[str, Any] | None) -> int | None:
    """The prompt size the server reports, or None when it reports none (0 means none too:
    some servers send 0 rather than omit the field).

    OpenAI's ``prompt_tokens`` includes the cached part (``prompt_tokens_details.
    cached_tokens``), so a cached count above it can only mean a server that reports the
    two apart (some Ollama builds): then the prompt is their sum, not a cut prompt.
    """
    if not isinstance(usage, dict):
        return None
    value = _count(usage.get("prompt_tokens"))
    if value is None or value <= 0:
        return None
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    return value + cached if cached is not None and cached > value else value


def is_truncated(served: int, estimated: int) -> bool:
    return served < estimated * TRUNCATION_RATIO


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
