"""Shared HTTP plumbing, so each engine module only builds its request and maps its response.

Policies, and why:
- one request at a time per client (callers await ``search`` sequentially), so latency samples
  are comparable across engines;
- retries follow the one shared policy (``needle_lib.net.retry``): 429/5xx, connection errors
  and timeouts, ``Retry-After`` honoured; every retry is counted and reported per engine,
  because an engine that only answers on the third try is a finding of its own;
- every failure becomes ``SearchOutcome.error`` text naming the engine, with the API key
  scrubbed before anything is cut (``redact_then_cut``), because a benchmark must report a
  broken engine rather than crash on it;
- one malformed entry in a result list (``null``, a string, an object without a URL) is
  skipped and counted (``SearchOutcome.malformed``), never a void answer: the other results
  are real, and failing the whole search would score the engine's outage, not its ranking;
- ``timeout`` is a total deadline per attempt and a response is read up to
  ``max_response_bytes`` (decoded): a page cut there cannot be parsed, so it is an error
  naming the cap, not a silent partial result.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, ClassVar

import httpx

from needle_lib.errors import NeedleError
from needle_lib.jsonio import JSONObject, loads_untrusted
from needle_lib.net.body import MAX_TIMEOUT_S, BodyLimits, MiB, UnreadableBody, is_truncated
from needle_lib.net.cleartext import warn_cleartext_key
from needle_lib.net.retry import RetriesExhausted, RetryPolicy, Sleep, send
from needle_lib.net.tls import ca_context
from needle_lib.redact import redact_then_cut, register_secret
from needle_lib.search.bounds import bound_result
from needle_lib.search.operators import ParsedQuery, parse_query
from needle_lib.search.types import SearchOutcome, SearchResult

_DETAIL_CHARS = 200
#: Error text kept per failed search (after redaction).
_ERROR_CHARS = 500
#: Default cap on one search response; ten results with full page text stay far below it.
DEFAULT_MAX_RESPONSE_BYTES = 16 * MiB


#: One value of a query string, as httpx encodes it (``true``, ``1.5``; None: empty).
QueryValue = str | int | float | bool | None
#: A GET request's query string (httpx encodes each value; a list repeats the key).
QueryParams = Mapping[str, QueryValue | list[QueryValue]]


@dataclass(frozen=True)
class EngineRequest:
    """What one engine call sends; ``path`` is appended to the client's base URL."""

    method: str
    path: str
    params: QueryParams | None = None
    json: JSONObject | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


class EngineError(NeedleError):
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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if snippet_chars < 0:
            raise ValueError(f"snippet_chars must be >= 0 (0 = no cap), got {snippet_chars}")
        if not 0 < timeout <= MAX_TIMEOUT_S:
            raise ValueError(f"timeout must be > 0 and at most {MAX_TIMEOUT_S:g} seconds, "
                             f"got {timeout}")
        self.name = name
        self._api_key = api_key or None
        register_secret(self._api_key)
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        warn_cleartext_key(self.base_url, who=f"engine {name!r}", key=self._api_key)
        self.mode = mode
        self.snippet_chars = snippet_chars
        self.timeout = timeout
        self.limits = BodyLimits(timeout, max_response_bytes)
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        #: Wall time of every successful ``search`` call, retries included.

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    @abstractmethod
    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        """The request for ``query``; operators are translated or dropped, never sent literally."""

    @abstractmethod
    def parse_results(self, payload: Any) -> Iterable[SearchResult | None]:
        """Map a decoded JSON body to results, ``None`` for a malformed entry (see
        ``each_entry``); raise ``EngineError`` for an API error field."""

    def parse_answer(self, payload: Any, query: ParsedQuery) -> Iterable[SearchResult | None]:
        """``parse_results`` for an engine whose reading of a body depends on the query it
        answers (SearchApi's "no results" error); the others read the body alone."""
        return self.parse_results(payload)

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
            entries = self._map(payload, parsed)
        except EngineError as exc:
            return self._failed(exc, start, retries)
        # every field an engine sent is capped here, before anything reads it (the judge,
        # the matchers, reports): a 20,000-character title used to reach all of them whole
        usable = [bound_result(r) for r in entries if r is not None and r.url]
        latency = perf_counter() - start
        return SearchOutcome(tuple(usable[:num_results]), None, latency, retries,
                             malformed=len(entries) - len(usable))

    def _failed(self, exc: EngineError, start: float, retries: int) -> SearchOutcome:
        error = redact_then_cut(f"{self.name}: {exc}", _ERROR_CHARS, (self._api_key,))
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
            self._client = httpx.AsyncClient(timeout=self.timeout, verify=ca_context())
        return self._client

    async def _send(self, request: EngineRequest) -> tuple[Any, int]:
        """The decoded JSON body and how many times the request was sent again."""
        http = self._http()
        try:
            built = http.build_request(
                request.method,
                f"{self.base_url}{request.path}",
                params=request.params,
                json=request.json,
                headers=dict(request.headers),
                timeout=self.timeout,
            )
            sent = await send(http, built, self.retry, self._sleep, self.limits)
        except httpx.InvalidURL as exc:  # e.g. a 100 KB query on a GET engine
            raise EngineError(f"request URL refused before sending ({exc}); the query "
                              f"is {len(str(request.params or ''))} characters of parameters") \
                from None
        except RetriesExhausted as exc:
            reason = (f"timed out after {self.timeout:g}s"
                      if exc.timed_out else _connection_reason(exc.error))
            raise EngineError(_gave_up(reason, exc.attempts), retries=exc.attempts - 1) from exc
        response = sent.response
        if not response.is_success:
            detail = _detail(response, self._api_key)
            raise EngineError(_gave_up(f"HTTP {response.status_code}{detail}", sent.attempts),
                              retries=sent.retries)
        if is_truncated(response):
            raise EngineError(f"response larger than the {self.limits.max_bytes}-byte cap "
                              "(max_response_bytes); not parsed", retries=sent.retries)
        return _decode_json(response, sent.retries, self._api_key), sent.retries

    def _map(self, payload: Any, query: ParsedQuery) -> list[SearchResult | None]:
        """Every entry the engine sent (``None`` = malformed). ``search`` keeps the top K of
        those with a URL; snippets stay whole: the consumer applies the uniform evidence
        budget (``cap_snippet``; the judge cuts with a note saying how much it left out, the
        known-item matcher reads the capped text)."""
        try:
            return list(self.parse_answer(payload, query))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise EngineError(f"unexpected response shape ({type(exc).__name__}: {exc})") from exc



def make_result(
    url: Any, title: Any = None, snippet: Any = None, published_date: Any = None
) -> SearchResult:
    """A result from loosely typed JSON fields: missing text becomes ``""``, a blank date None.
    A URL that is not a string (``url: 123``) becomes ``""``: the item is malformed, and
    ``search`` skips and counts it."""
    date = str(published_date).strip() if published_date else None
    return SearchResult(
        url=url.strip() if isinstance(url, str) else "",
        title=str(title or "").strip(),
        snippet=str(snippet or "").strip(),
        published_date=date or None,
    )


def each_entry(items: Any, build: Callable[[Mapping[str, Any]], SearchResult]
               ) -> list[SearchResult | None]:
    """``build`` applied to every object of a result list; ``None`` where an entry is not an
    object (``null``, a string), so ``search`` skips and counts it. A list that is missing is
    empty; a "list" that is not one is a response-shape error (``TypeError``)."""
    if not items:
        return []
    if not isinstance(items, list):
        raise TypeError(f"expected a list of results, got {type(items).__name__}")
    return [build(item) if isinstance(item, Mapping) else None for item in items]


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
            raise EngineError(f"API error: {value}")


def _connection_reason(error: httpx.TransportError) -> str:
    reason = f"connection error ({type(error).__name__})"
    return f"{reason}: {error}" if isinstance(error, UnreadableBody) else reason


def _gave_up(reason: str, attempts: int) -> str:
    return f"{reason}; gave up after {attempts} attempts" if attempts > 1 else reason


def _decode_json(response: httpx.Response, retries: int, secret: str | None) -> Any:
    try:
        return loads_untrusted(response.content)
    except ValueError as exc:
        preview = redact_then_cut(response.text, 60, (secret,))
        raise EngineError(f"response is not valid JSON ({exc}; starts {preview!r})",
                          retries=retries) from exc


def _detail(response: httpx.Response, secret: str | None) -> str:
    """A short server-provided reason for an HTTP error, if there is one (key scrubbed
    before the cut, so a key echoed across the cut cannot survive in part)."""
    try:
        body = loads_untrusted(response.content)
    except ValueError:
        body = None
    text = response.text.strip()
    if isinstance(body, Mapping):
        text = ""
        for key in ("message", "error", "detail", "msg"):
            value = body.get(key)
            if value:
                if isinstance(value, Mapping):
                    value = value.get("message") or json.dumps(value)
                text = str(value)
                break
    return f": {redact_then_cut(text, _DETAIL_CHARS, (secret,))}" if text else ""
