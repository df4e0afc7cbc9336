"""Pure OpenAI-compatible chat protocol: build the request, interpret the answer.

No I/O here, so the sync and async clients share every rule and tests can exercise the
rules without a server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from needle_lib.jsonio import JSON, JSONObject, loads_untrusted
from needle_lib.llm.config import REFERENCE_BASE_URL, ModelConfig
from needle_lib.llm.errors import (
    ContextOverflowError,
    LLMBadResponseError,
    LLMError,
    LLMHTTPError,
    PromptTruncatedError,
)
from needle_lib.llm.formats import ResponseFormat, refuses_format
from needle_lib.llm.overflow import detect_overflow, explain_overflow
from needle_lib.llm.truncation import (
    explain_truncation,
    prompt_count,
    served_prompt_tokens,
)
from needle_lib.net.retry import parse_retry_after
from needle_lib.redact import redact_then_cut

#: Assistant turn that makes a reasoning model continue after an already-closed think block.
NO_THINK_PREFILL = "<think>\n\n</think>\n\n"
#: Origin the in-process reference transport answers on; ``.invalid`` never resolves, so a
#: misrouted reference request fails instead of reaching a real host.
REFERENCE_ORIGIN = "http://reference.invalid"
_EXCERPT_CHARS = 300
_INLINE_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)
_JSON = json.JSONDecoder()
_CONTENT_KEY = re.compile(r'"content"\s*:\s*"')

#: A conversation as Needle sends it: each message's ``role`` and ``content`` as text.
Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class ChatResult:
    """One completed chat call, as recorded in result dumps."""

    content: str
    reasoning: str | None
    finish_reason: str | None
    usage: JSONObject | None
    timings: JSONObject | None
    latency_s: float
    model: str | None
    attempts: int
    #: What the server's prompt count covered (``PromptCount``), None when unchecked.
    prompt_count: str | None = None
    #: Needle kept only the head of an answer larger than ``max_answer_bytes``.
    truncated_by_needle: bool = False


@dataclass(frozen=True)
class ChatRequest:
    """A prepared request plus what error messages need to know about it."""

    url: str
    payload: JSONObject
    model: str
    #: The prompt's size under the reference tokenizer, when the caller knows it: sizes
    #: overflow messages and catches servers that silently truncate.
    estimated_prompt_tokens: int | None
    #: The prompt's tokens after the prefix it shares with other requests: all a prefix
    #: cache leaves to evaluate (tells a cache-only count from a truncated prompt).
    estimated_tail_tokens: int | None
    max_tokens: int
    secret: str | None  # only used to scrub echoes of the key out of error excerpts

    def __repr__(self) -> str:
        return f"ChatRequest(url={self.url!r}, model={self.model!r})"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.secret:
            headers["Authorization"] = f"Bearer {self.secret}"
        return headers

    def excerpt(self, text: str) -> str:
        """A short, single-line, key-free piece of a response body for error messages."""
        return redact_then_cut(text, _EXCERPT_CHARS, (self.secret,))


def chat_url(base_url: str) -> str:
    """``{base}/v1/chat/completions``, accepting a base with or without a trailing ``/v1``."""
    if base_url == REFERENCE_BASE_URL:
        base_url = REFERENCE_ORIGIN
    base = base_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/chat/completions"


def build_payload(
    config: ModelConfig, messages: Messages, *, max_tokens: int | None = None,
    response_format: ResponseFormat | None = None,
) -> JSONObject:
    """The JSON body; optional knobs are sent only when set, since strict servers reject them.
    ``response_format`` asks for structured output (``llm.structured``)."""
    turns: list[JSON] = [{key: text for key, text in message.items()} for message in messages]
    if config.prefill_no_think:
        turns.append({"role": "assistant", "content": NO_THINK_PREFILL})
    payload: JSONObject = {
        "model": config.name,
        "messages": turns,
        "temperature": config.temperature,
        config.token_field: max_tokens if max_tokens is not None else config.max_tokens,
        "stream": False,
    }
    if config.reasoning_effort is not None:
        payload["reasoning_effort"] = config.reasoning_effort
    if config.stop:
        payload["stop"] = list(config.stop)
    if response_format is not None:
        # a ResponseFormat holds only JSON values (a TypedDict is not a JSON dict to mypy)
        payload["response_format"] = cast(JSON, response_format)
    return payload


def prepare_request(
    config: ModelConfig,
    messages: Messages,
    *,
    api_key: str | None,
    max_tokens: int | None = None,
    prompt_tokens: int | None = None,
    tail_tokens: int | None = None,
    response_format: ResponseFormat | None = None,
) -> ChatRequest:
    return ChatRequest(
        url=chat_url(config.base_url),
        payload=build_payload(config, messages, max_tokens=max_tokens,
                              response_format=response_format),
        model=config.name,
        estimated_prompt_tokens=prompt_tokens,
        estimated_tail_tokens=tail_tokens,
        max_tokens=max_tokens if max_tokens is not None else config.max_tokens,
        secret=api_key,
    )


def _overflow_error(req: ChatRequest, status: int, body: str) -> ContextOverflowError | None:
    overflow = detect_overflow(body)
    if overflow is None:
        return None
    return ContextOverflowError(
        status,
        req.excerpt(body),
        model=req.model,
        url=req.url,
        detail=explain_overflow(
            overflow,
            model=req.model,
            estimate=req.estimated_prompt_tokens,
            max_tokens=req.max_tokens,
        )
        + f" (server said: {req.excerpt(body)})",
        server_limit=overflow.server_limit,
        server_prompt_tokens=overflow.server_prompt_tokens,
        estimated_prompt_tokens=req.estimated_prompt_tokens,
    )


def http_error(req: ChatRequest, status: int, body: str, retry_after: str | None) -> LLMError:
    """The error for a non-2xx answer: a context overflow if the body says so. A refusal of
    the request's ``response_format`` is final, whatever its status (``llm.formats``): the
    caller asks again in another shape, and repeating the same request cannot help."""
    error = _overflow_error(req, status, body) or LLMHTTPError(
        status,
        req.excerpt(body) or "(empty body)",
        model=req.model,
        url=req.url,
        retry_after=parse_retry_after(retry_after),
    )
    if "response_format" in req.payload and refuses_format(error):
        error.retryable = False
    return error


def _bad(req: ChatRequest, what: str, body: str) -> LLMBadResponseError:
    return LLMBadResponseError(
        f"{what}; received: {req.excerpt(body) or '(empty body)'}", model=req.model, url=req.url
    )


def _text_field(message: JSONObject, *names: str) -> str | None:
    for name in names:
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _content_head(body: str) -> str | None:
    """The (possibly cut) ``message.content`` string of a completion body that Needle cut
    at ``max_answer_bytes``: the JSON is unfinished, so the string is closed by hand."""
    match = _CONTENT_KEY.search(body)
    if match is None:
        return None
    rest = body[match.end():].rstrip("\ufffd")  # a multi-byte character cut in half
    for drop in range(7):  # a dangling escape (``\``, ``\u12``) is at most 6 characters
        try:
            value, _ = _JSON.raw_decode('"' + rest[: len(rest) - drop] + '"')
            return str(value)
        except ValueError:
            continue
    return None


def _truncated_completion(req: ChatRequest, body: str, *, latency_s: float,
                          attempts: int) -> ChatResult:
    content = _content_head(body)
    if content is None:
        raise _bad(req, f"the answer is larger than the {len(body.encode())}-byte cap "
                   "(max_answer_bytes) and its head holds no message content", body)
    return ChatResult(content=content, reasoning=None, finish_reason=None, usage=None,
                      timings=None, latency_s=latency_s, model=None, attempts=attempts,
                      truncated_by_needle=True)


def parse_completion(
    req: ChatRequest, status: int, body: str, *, latency_s: float, attempts: int,
    truncated: bool = False,
) -> ChatResult:
    """Interpret a 2xx body; raise LLMBadResponseError/LLMHTTPError when it is not a completion.
    ``truncated``: Needle kept only the body's head; its content is salvaged and flagged."""
    if body.lstrip().startswith("<"):
        raise _bad(req, "expected JSON but got an HTML/XML page (is base_url a web UI?)", body)
    try:
        data = loads_untrusted(body)
    except ValueError:
        if truncated:
            return _truncated_completion(req, body, latency_s=latency_s, attempts=attempts)
        raise _bad(req, "response is not valid JSON", body) from None
    if not isinstance(data, dict):
        raise _bad(req, f"expected a JSON object, got {type(data).__name__}", body)
    if data.get("error"):
        # Some proxies report failures inside a 200.
        raise _overflow_error(req, status, body) or LLMHTTPError(
            status,
            req.excerpt(body),
            model=req.model,
            url=req.url,
            detail=f"HTTP {status} carrying an error object: {req.excerpt(body)}",
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _bad(req, "no 'choices' in the completion", body)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _bad(req, "choices[0] has no 'message' object", body)
    content = message.get("content")
    # null content is a real answer shape (refusal, or every token spent on reasoning and
    # finish_reason "length"): score it as empty rather than abort the run.
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise _bad(req, f"message.content is {type(content).__name__}, not a string", body)
    reasoning = _text_field(message, "reasoning_content", "reasoning")
    inline = _INLINE_THINK.match(content)
    if reasoning is None and inline:
        # Servers without a reasoning parser leave <think>…</think> in the content.
        reasoning, content = inline.group(1).strip(), content[inline.end() :]
    usage, timings = data.get("usage"), data.get("timings")
    usage = usage if isinstance(usage, dict) else None
    timings = timings if isinstance(timings, dict) else None
    served, estimated = served_prompt_tokens(usage, timings), req.estimated_prompt_tokens
    count = None
    if served is not None and estimated is not None:
        count = prompt_count(served, estimated, req.estimated_tail_tokens)
        if count is None:
            raise PromptTruncatedError(
                explain_truncation(served=served, estimated=estimated, max_tokens=req.max_tokens),
                model=req.model,
                url=req.url,
                served_prompt_tokens=served,
                estimated_prompt_tokens=estimated,
            )
    return ChatResult(
        content=content,
        reasoning=reasoning,
        finish_reason=choice.get("finish_reason"),
        usage=usage,
        timings=timings,
        latency_s=latency_s,
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        attempts=attempts,
        prompt_count=count.value if count else None,  # plain JSON: xdist ships records
        truncated_by_needle=truncated,
    )
