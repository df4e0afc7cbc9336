"""Shared HTTP plumbing, so each engine module only builds its request and maps its response.

Policies, and why:
- one request at a time per client (callers await ``search`` sequentially), so latency samples
  are comparable across engines;
- retries follow the one shared policy (``needle_lib.net.retry``): 429/5xx, connection errors
  and timeouts, ``Retry-After`` honoured; every retry is counted and reported per engine,
  because an engine that only answers on the third try is a finding of its own;
- every failure becomes ``SearchOutcome.error`` text naming the engine, with the API key
  scrubbed, because a benchmark must report a broken engine rather than crash on it.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from time import perf_counter
from typing import Any, ClassVar

import httpx

from needle_lib.net.bodies import body_excerpt
from needle_lib.net.retry import RetriesExhausted, RetryPolicy, Sleep, send
from needle_lib.search.operators import ParsedQuery, parse_query
from needle_lib.search.types import SearchOutcome, SearchResult

_DETAIL_CHARS = 200


@dataclass(frozen=True)
class EngineRequest:
    """What one engine call sends; ``path`` is appended to the client's base URL."""

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


class EngineError(Exception):
    """Raised inside a client (e.g. for an API error field); ``search`` turns it into data.
    ``retries`` says how often the request was sent again before it failed for good."""

    def __init__(self, message: str, *, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries


class HttpSearchClient(ABC):
    """Base for HTTP engines: subclasses set ``default_base_url`` and implement two methods."""

    default_base_url: ClassVar[str]
    #: Inclusive range of the API's snippet-length request parameter; None = no such parameter.
    snippet_budget_range: tuple[int, int] | None = None

    def __init__(
        self,
        *,
        name: str,
        api_key: str | None,
        base_url: str | None = None,
        mode: str | None = None,
        snippet_chars: int = 2000,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if snippet_chars < 0:
            raise ValueError(f"snippet_chars must be >= 0 (0 = no cap), got {snippet_chars}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.name = name
        self._api_key = api_key or None
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.mode = mode
        self.snippet_chars = snippet_chars
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        #: Wall time of every successful ``search`` call, retries included.
        self.latency_samples: list[float] = []

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    @abstractmethod
    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        """The request for ``query``; operators are translated or dropped, never sent literally."""

    @abstractmethod
    def parse_results(self, payload: Any) -> Iterable[SearchResult]:
        """Map a decoded JSON body to results; raise ``EngineError`` for an API error field."""

    def _key(self) -> str:
        """The key for a header (engines with a required key only get built when it is set)."""
        return self._api_key or ""

    def snippet_budget(self) -> int | None:
        """The snippet-length request value: ``snippet_chars`` clamped to the API's range."""
        if not self.snippet_chars or self.snippet_budget_range is None:
            return None
        low, high = self.snippet_budget_range
        return min(max(self.snippet_chars, low), high)

    async def search(self, query: str, *, num_results: int) -> SearchOutcome:
        start = perf_counter()
        try:
            parsed = parse_query(query)
            if parsed.is_empty:
                raise EngineError("empty query: nothing to search for (no request sent)")
            payload, retries = await self._send(self.build_request(parsed, num_results))
        except EngineError as exc:
            return self._failed(exc, start, exc.retries)
        try:
            results = self._finish(self._map(payload), num_results)
        except EngineError as exc:
            return self._failed(exc, start, retries)
        latency = perf_counter() - start
        self.latency_samples.append(latency)
        return SearchOutcome(results, None, latency, retries)

    def _failed(self, exc: EngineError, start: float, retries: int) -> SearchOutcome:
        error = self._redact(f"{self.name}: {exc}")
        return SearchOutcome((), error, perf_counter() - start, retries)

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> HttpSearchClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    async def _send(self, request: EngineRequest) -> tuple[Any, int]:
        """The decoded JSON body and how many times the request was sent again."""
        http = self._http()
        built = http.build_request(
            request.method,
            f"{self.base_url}{request.path}",
            params=request.params,
            json=request.json,
            headers=dict(request.headers),
            timeout=self.timeout,
        )
        try:
            sent = await send(http, built, self.retry, self._sleep)
        except RetriesExhausted as exc:
            reason = (f"timed out after {self.timeout:g}s" if exc.timed_out
                      else f"connection error ({type(exc.error).__name__})")
            raise EngineError(_gave_up(reason, exc.attempts), retries=exc.attempts - 1) from exc
        response = sent.response
        if not response.is_success:
            raise EngineError(_gave_up(f"HTTP {response.status_code}{_detail(response)}",
                                       sent.attempts), retries=sent.retries)
        return _decode_json(response, sent.retries), sent.retries

    def _map(self, payload: Any) -> list[SearchResult]:
        try:
            return list(self.parse_results(payload))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise EngineError(f"unexpected response shape ({type(exc).__name__}: {exc})") from exc

    def _finish(self, results: list[SearchResult], num_results: int) -> tuple[SearchResult, ...]:
        """Drop URL-less hits and keep the top K. Snippets stay whole: the consumer applies
        the uniform evidence budget (``cap_snippet``; the judge cuts with a note saying how
        much it left out, the known-item matcher reads the capped text)."""
        return tuple([r for r in results if r.url][:num_results])

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text


def make_result(
    url: Any, title: Any = None, snippet: Any = None, published_date: Any = None
) -> SearchResult:
    """A result from loosely typed JSON fields: missing text becomes ``""``, a blank date None."""
    date = str(published_date).strip() if published_date else None
    return SearchResult(
        url=str(url or "").strip(),
        title=str(title or "").strip(),
        snippet=str(snippet or "").strip(),
        published_date=date or None,
    )


def join_texts(parts: Any) -> str:
    """Join a list of excerpt strings (several APIs return snippets as a list)."""
    if isinstance(parts, str):
        return parts
    return "\n".join(str(p) for p in parts or () if p)


def raise_api_error(payload: Any, *fields: str) -> None:
    """Raise ``EngineError`` when a 200 body carries an error field (SearchApi, Perplexity…)."""
    if not isinstance(payload, Mapping):
        return
    for name in fields:
        value = payload.get(name)
        if value:
            if isinstance(value, Mapping):
                value = value.get("message") or json.dumps(value)
            raise EngineError(f"API error: {str(value)[:_DETAIL_CHARS]}")


def _gave_up(reason: str, attempts: int) -> str:
    return f"{reason}; gave up after {attempts} attempts" if attempts > 1 else reason


def _decode_json(response: httpx.Response, retries: int) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        preview = response.text[:60]
        raise EngineError(f"response is not valid JSON (starts {preview!r})",
                          retries=retries) from exc


def _detail(response: httpx.Response) -> str:
    """A short server-provided reason for an HTTP error, if there is one."""
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
        return f": {body_excerpt(text, _DETAIL_CHARS)}" if text else ""
    if isinstance(body, Mapping):
        for key in ("message", "error", "detail", "msg"):
            value = body.get(key)
            if value:
                if isinstance(value, Mapping):
                    value = value.get("message") or json.dumps(value)
                return f": {str(value)[:_DETAIL_CHARS]}"
    return ""


def cap_snippet(result: SearchResult, snippet_chars: int) -> SearchResult:
    """``result`` with its snippet cut to the run's evidence budget (0 = no cap): every
    engine is matched on the same amount of text, however long its snippets are."""
    if not snippet_chars or len(result.snippet) <= snippet_chars:
        return result
    return replace(result, snippet=result.snippet[:snippet_chars])
