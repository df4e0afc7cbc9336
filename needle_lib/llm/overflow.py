"""Recognise "prompt too long for the loaded context" answers and say how to fix them.

The recall benchmark sends whole corpora (up to ~130k tokens), and local servers load
models with a small default context (4k–32k). Each server words the failure differently and
most of them answer with a generic 400, so without this the user sees an opaque HTTP error
instead of the one command that fixes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.tokens import ANSWER_ROOM, REFERENCE

#: Context size suggested when the prompt's size is unknown: enough for the largest corpus.
DEFAULT_CONTEXT = 131072
#: The smallest context suggested: servers' own defaults start here.
MIN_CONTEXT = 4096


@dataclass(frozen=True)
class Overflow:
    """What an overflow answer revealed: the server's context limit and its prompt count."""

    server_limit: int | None = None
    server_prompt_tokens: int | None = None


# (pattern, group holding the limit, group holding the prompt size); 0 = not in this wording.
_WORDINGS: tuple[tuple[re.Pattern[str], int, int], ...] = (
    # llama.cpp server: "request (4476 tokens) exceeds the available context size (4096 tokens)"
    (re.compile(r"\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)"), 2, 1),
    # llama.cpp, older builds: "the request exceeds the available context size, try increasing it"
    (re.compile(r"exceeds the available context size"), 0, 0),
    # LM Studio: "Trying to keep the first 15857 tokens when context the overflows. However,
    # the model is loaded with context length of only 4096 tokens, ..."
    (
        re.compile(
            r"keep the first (\d+) tokens when context the overflows"
            r"(?:.*?context length of only (\d+) tokens)?",
            re.S,
        ),
        2,
        1,
    ),
    # LM Studio, mid-generation: "Reached context length of 32000 tokens"
    (re.compile(r"Reached context length of (\d+) tokens"), 1, 0),
    # vLLM / OpenAI: "This model's maximum context length is 16384 tokens. However, you
    # requested 122946 tokens" (or "your messages resulted in N tokens").
    (
        re.compile(
            r"maximum context length is (\d+) tokens"
            r"(?:.*?(?:requested|resulted in|request has) (\d+)(?: input)? tokens)?",
            re.S,
        ),
        1,
        2,
    ),
    # Anthropic: "prompt is too long: 215000 tokens > 200000 maximum"
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum"), 2, 1),
    # OpenAI error code, and its newer "Your input exceeds the context window" wording.
    (re.compile(r"context_length_exceeded|exceeds the context window"), 0, 0),
)


def _group_int(match: re.Match[str], group: int) -> int | None:
    value = match.group(group) if group else None
    return int(value) if value else None


def _error_object(body: str) -> JSONObject | None:
    try:
        data: JSON = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    return error if isinstance(error, dict) else data


def detect_overflow(body: str) -> Overflow | None:
    """Return what an error body says about a context overflow, or None if it is not one."""
    error = _error_object(body) or {}
    n_ctx, n_prompt = error.get("n_ctx"), error.get("n_prompt_tokens")
    if error.get("type") == "exceed_context_size_error" or (
        isinstance(n_ctx, int) and isinstance(n_prompt, int)
    ):
        return Overflow(
            server_limit=n_ctx if isinstance(n_ctx, int) else None,
            server_prompt_tokens=n_prompt if isinstance(n_prompt, int) else None,
        )
    for pattern, limit_group, prompt_group in _WORDINGS:
        match = pattern.search(body)
        if match:
            return Overflow(
                server_limit=_group_int(match, limit_group),
                server_prompt_tokens=_group_int(match, prompt_group),
            )
    return None


def suggested_context(prompt_tokens: int | None, answer_tokens: int | None = None) -> int:
    """The context length to suggest: the smallest power of two (from 4,096) that holds the
    prompt and its answer (``ANSWER_ROOM``, or ``answer_tokens`` when larger), so a user
    does not load 128K for an 11K prompt; 131072 when the prompt's size is unknown."""
    if prompt_tokens is None:
        return DEFAULT_CONTEXT
    needed = prompt_tokens + max(answer_tokens or 0, ANSWER_ROOM)
    size = MIN_CONTEXT
    while size < needed:
        size *= 2
    return size


def explain_overflow(
    overflow: Overflow, *, model: str, estimate: int | None, max_tokens: int | None,
    first_fix: str | None = None, maximum: tuple[int, str] | None = None,
) -> str:
    """The ContextOverflowError message: sizes as far as known, then how to fix it.

    ``estimate`` is the prompt's size under the reference tokenizer, when the caller knows it.
    ``first_fix`` is the caller's better fix (a smaller prompt, when a benchmark can make
    one): reloading the model with a larger context then comes second, as it only helps a
    model trained on one. ``maximum`` is the model's own maximum context and where it was
    reported: when the suggested context exceeds it, no reload is suggested at all (a model
    trained on 8K is not helped by ``--ctx-size 16384``).
    """
    parts = ["the prompt does not fit the server's context window"]
    if estimate is not None:
        parts.append(f"prompt ≈ {estimate:,} tokens ({REFERENCE})")
    if overflow.server_prompt_tokens is not None:
        parts.append(f"server counted {overflow.server_prompt_tokens} tokens")
    if overflow.server_limit is not None:
        parts.append(f"server limit {overflow.server_limit} tokens")
    if max_tokens is not None:
        parts.append(f"plus up to {max_tokens} answer tokens")
    ctx = suggested_context(overflow.server_prompt_tokens or estimate, max_tokens)
    reload = (
        f"LM Studio: `lms unload {model}` then `lms load {model} --context-length {ctx}`; "
        f"llama.cpp: restart llama-server with `--ctx-size {ctx}`; "
        f"vLLM: restart with `--max-model-len {ctx}`; "
        "hosted API: the model's window is fixed, use a smaller corpus or another model"
    )
    if maximum is not None and maximum[0] < ctx:
        parts.append(f"the model's own maximum is {maximum[0]:,} tokens ({maximum[1]}), so "
                     f"no larger context fits this prompt")
        return "; ".join(parts) + ". Fix: " + (first_fix or "use a smaller prompt")
    if first_fix is None:
        return "; ".join(parts) + ". Fix: " + reload
    return (f"{'; '.join(parts)}. Fix: {first_fix}. Or, if the model was trained on a "
            f"{ctx:,}-token context or more, load it with one: {reload}")
