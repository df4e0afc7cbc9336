"""OpenAI-compatible chat clients over httpx: a sync one and an async twin.

Both run the same attempt/retry policy around the pure functions in ``protocol``; only the
I/O differs. A ``transport`` can be injected (respx, a loopback server, or the in-process
reference oracle), so every caller goes through the same request path.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Self

import httpx

from needle_lib.llm.config import ModelConfig
from needle_lib.llm.errors import LLMConnectionError, LLMError
from needle_lib.llm.formats import ResponseFormat
from needle_lib.llm.protocol import (
    ChatRequest,
    ChatResult,
    Messages,
    http_error,
    parse_completion,
    prepare_request,
)
from needle_lib.llm.request_body import json_body
from needle_lib.net.body import BodyLimits, is_truncated, read_async, read_sync
from needle_lib.net.cleartext import warn_cleartext_key
from needle_lib.net.pools import ShardedTransport
from needle_lib.net.retry import Attempts, RetryPolicy
from needle_lib.net.tls import ca_context
from needle_lib.redact import register_secret


def _request(http: httpx.Client | httpx.AsyncClient, req: ChatRequest) -> httpx.Request:
    return http.build_request(
        "POST", req.url, content=json_body(req.payload), headers=req.headers()
    )


class _ClientBase:
    """What both clients share: config, resolved key, retry policy, error mapping."""

    def __init__(self, config: ModelConfig, retry: RetryPolicy | None) -> None:
        self.config = config
        self.retry = retry or RetryPolicy()
        self._api_key = config.resolve_api_key()
        register_secret(self._api_key)
        warn_cleartext_key(config.base_url, who=f"model {config.name!r}", key=self._api_key)

    def _verify(self) -> ssl.SSLContext:
        """TLS verification for the client. A plain-HTTP server (LM Studio, llama.cpp on
        localhost) never needs the CA bundle, which takes ~0.1 s to load per client: such a
        client gets a context that verifies but trusts nothing, so TLS fails closed. Other
        clients share the process's verifying context (the bundle loaded once)."""
        if self.config.base_url.startswith("http://"):
            return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return ca_context()  # loaded once per process

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.config.name!r}, base_url={self.config.base_url!r})"
        )

    def _prepare(
        self,
        messages: Messages,
        max_tokens: int | None,
        prompt_tokens: int | None,
        tail_tokens: int | None,
        response_format: ResponseFormat | None = None,
    ) -> ChatRequest:
        return prepare_request(
            self.config,
            messages,
            api_key=self._api_key,
            max_tokens=max_tokens,
            prompt_tokens=prompt_tokens,
            tail_tokens=tail_tokens,
            response_format=response_format,
        )

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.config.timeout)

    def _limits(self) -> BodyLimits:
        """``timeout`` is the whole attempt's deadline; the answer is capped in size."""
        return BodyLimits(self.config.timeout, self.config.max_answer_bytes)

    def _connection_error(self, req: ChatRequest, exc: httpx.TransportError) -> LLMConnectionError:
        if isinstance(exc, httpx.TimeoutException):
            detail = (
                f"no complete response within the {self.config.timeout:g}s timeout (a total "
                f"deadline per attempt; {type(exc).__name__}); raise `timeout` if the model "
                "is slow on long prompts"
            )
        else:
            detail = (
                f"cannot connect ({type(exc).__name__}: {req.excerpt(str(exc))}); "
                "the server may not be running or base_url may be wrong"
            )
        error = LLMConnectionError(detail, model=req.model, url=req.url)
        error.retryable = self.retry.retryable_exception(exc)
        return error

    def _outcome(
        self, req: ChatRequest, response: httpx.Response, latency_s: float, attempt: int
    ) -> ChatResult | LLMError:
        """An attempt's completion or its error, always returned so one place decides."""
        if not response.is_success:
            return http_error(
                req, response.status_code, response.text, response.headers.get("Retry-After")
            )
        try:
            return parse_completion(
                req,
                response.status_code,
                response.text,
                latency_s=latency_s,
                attempts=attempt,
                truncated=is_truncated(response),
            )
        except LLMError as error:  # returned, not raised: ``_settle`` stamps the attempt count
            return error

    def _settle(
        self,
        req: ChatRequest,
        sent: httpx.Response | httpx.TransportError,
        started: float,
        attempts: Attempts,
    ) -> ChatResult | float:
        """One attempt's result, or the seconds to wait before the next one; the shared
        policy decides, and a final error (raised) says how many attempts it took."""
        if isinstance(sent, httpx.TransportError):
            outcome: ChatResult | LLMError = self._connection_error(req, sent)
        else:
            latency = time.perf_counter() - started
            outcome = self._outcome(req, sent, latency, attempts.attempt)
        if isinstance(outcome, ChatResult):
            return outcome
        delay = attempts.next_delay(
            retryable=outcome.retryable, retry_after=getattr(outcome, "retry_after", None)
        )
        if delay is None:
            outcome.attempts = attempts.attempt
            raise outcome
        return delay


class ChatClient(_ClientBase):
    """Synchronous client (pytest fixtures, the recall benchmark)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(config, retry)
        self._sleep = sleep
        self._http = httpx.Client(
            transport=transport, timeout=self._timeout(), verify=self._verify()
        )

    def complete(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        prompt_tokens: int | None = None,
        tail_tokens: int | None = None,
        response_format: ResponseFormat | None = None,
    ) -> ChatResult:
        """Send one chat completion.

        ``prompt_tokens`` is the prompt's size under the reference tokenizer, if known: it
        sizes overflow messages, and an answer whose ``usage.prompt_tokens`` is far below it
        raises PromptTruncatedError (the server cut the prompt) unless the count is no
        larger than ``tail_tokens`` (the part after a shared, cacheable prefix): a cache hit.
        ``response_format`` asks for structured output (``llm.structured``).
        """
        req = self._prepare(messages, max_tokens, prompt_tokens, tail_tokens, response_format)
        attempts = Attempts(self.retry)
        while True:
            attempts.start()
            started = time.perf_counter()
            try:
                sent: httpx.Response | httpx.TransportError = read_sync(
                    self._http, _request(self._http, req), self._limits()
                )
            except httpx.TransportError as exc:
                sent = exc
            settled = self._settle(req, sent, started, attempts)
            if isinstance(settled, ChatResult):
                return settled
            self._sleep(settled)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncChatClient(_ClientBase):
    """Asynchronous client (the concurrent relevance judge)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        connections: int | None = None,
    ) -> None:
        """``connections``: the calls this client will have in flight at most (a judge's
        concurrency). Its pool keeps that many connections alive: with httpx's default of
        20, a judge at concurrency 64 closed and reopened connections on most calls (a TCP
        and TLS handshake each, the largest CPU cost of a judge call on loopback), spread
        over small pools (``ShardedTransport``: one large pool costs CPU quadratic in its
        size). ``sleep`` defaults to ``asyncio.sleep``, imported here: a recall run, which
        uses only the sync client, never loads asyncio."""
        import asyncio

        super().__init__(config, retry)
        self._sleep = sleep or asyncio.sleep
        if transport is None and connections is not None:
            transport = ShardedTransport(connections, verify=self._verify())
        self._http = httpx.AsyncClient(
            transport=transport, timeout=self._timeout(), verify=self._verify()
        )

    async def complete(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        prompt_tokens: int | None = None,
        tail_tokens: int | None = None,
        response_format: ResponseFormat | None = None,
    ) -> ChatResult:
        """Async twin of ``ChatClient.complete``."""
        req = self._prepare(messages, max_tokens, prompt_tokens, tail_tokens, response_format)
        attempts = Attempts(self.retry)
        while True:
            attempts.start()
            started = time.perf_counter()
            try:
                sent: httpx.Response | httpx.TransportError = await read_async(
                    self._http, _request(self._http, req), self._limits()
                )
            except httpx.TransportError as exc:
                sent = exc
            settled = self._settle(req, sent, started, attempts)
            if isinstance(settled, ChatResult):
                return settled
            await self._sleep(settled)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
