"""Polite access to the public sources that gold and fresh queries are generated from.

SEC, Wikidata, GLEIF, arXiv, Europe PMC, CourtListener, eCFR, news feeds: free services that
ask callers to identify themselves and to stay under a request rate. A ``SourceClient``
subclass names its source, its default base URL and its limits; this base enforces them:

- the base URL is overridable with ``NEEDLE_<SOURCE>_BASE_URL`` (tests, mirrors, proxies);
- a User-Agent that carries the user's contact (``NEEDLE_CONTACT``) where the source asks for
  one: SEC refuses anonymous clients, so a missing contact is an error before any request;
- a minimum interval between request starts (SEC: 10/s; arXiv: one per 3 s) and a bound on
  requests in flight, shared by every coroutine using the client;
- the shared retry policy (``Retry-After`` honoured), every retry counted in ``stats``;
- a host that refuses the connection or does not resolve is not retried: offline, or a
  wrong host, does not heal in seconds. ``SourceUnreachable`` names the host and the
  override, once the client has seen it every later request to that host fails at once, and
  it is not a
  ``SourceError``, so generators that drop one failed page stop the whole run on it;
- ``timeout`` is a total deadline per attempt, and a body larger than ``max_response_bytes``
  (decoded) is an error naming the cap: half a filing or half a JSON page is not data.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import httpx

from needle_lib import __version__
from needle_lib.errors import NeedleError
from needle_lib.jsonio import JSON, loads_untrusted
from needle_lib.net.body import BodyLimits, MiB, is_truncated
from needle_lib.net.reach import host_of, why_unreachable
from needle_lib.net.retry import RetriesExhausted, RetryPolicy, Sleep, is_unreachable, send
from needle_lib.redact import redact_then_cut
from needle_lib.tomlconf import ConfigError

CONTACT_ENV = "NEEDLE_CONTACT"
_EXCERPT = 200


class MissingContact(ConfigError):
    """A source requires a contact in the User-Agent and ``NEEDLE_CONTACT`` is unset."""

    def __init__(self, source: str) -> None:
        super().__init__(
            f"{source} asks every client to identify itself: set {CONTACT_ENV} to your email "
            f"(e.g. {CONTACT_ENV}=you@example.com); it goes into the User-Agent header only"
        )
        self.source = source


class SourceError(NeedleError):
    """A source request failed for good (after retries); names the source, URL and reason."""

    def __init__(self, source: str, url: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{source}: {url}: {reason}")
        self.source = source
        self.url = url
        self.status = status


class SourceUnreachable(NeedleError):
    """A source's host refused the connection or did not resolve: offline or a wrong host.

    One line naming the host, the reason and how to point the source elsewhere."""

    def __init__(self, source: str, url: str, reason: str, override: str) -> None:
        host = host_of(url)
        super().__init__(f"{source}: cannot reach {host} ({reason}); offline or behind a "
                         f"proxy? {override}")
        self.source = source
        self.url = url
        self.host = host
        self.reason = reason
        self.override = override


@dataclass
class SourceStats:
    requests: int = 0
    retries: int = 0
    errors: int = 0


class RateLimit:
    """At least ``interval`` seconds between request starts, across all coroutines."""

    def __init__(self, interval: float, *, sleep: Sleep, clock: Callable[[], float]) -> None:
        self.interval = interval
        self._sleep = sleep
        self._clock = clock
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if self.interval <= 0:
            return
        async with self._lock:
            now = self._clock()
            if now < self._next:
                await self._sleep(self._next - now)
                now = self._next
            self._next = now + self.interval


class SourceClient:
    """Base for one public source; subclasses add typed methods over ``get_json``/``get_text``."""

    #: Short lowercase name; also names the base-URL variable (``NEEDLE_SEC_BASE_URL``).
    source: ClassVar[str]
    default_base_url: ClassVar[str]
    #: Seconds between request starts (the source's published rate limit).
    min_interval: ClassVar[float] = 0.0
    max_in_flight: ClassVar[int] = 4
    #: Whether the source refuses (or asks us not to send) requests without a contact.
    contact_required: ClassVar[bool] = False
    timeout: ClassVar[float] = 30.0
    #: Decoded body bytes read per response; SEC company facts run to tens of MB.
    max_response_bytes: ClassVar[int] = 256 * MiB
    #: How a user points the source elsewhere, for the unreachable-host message; None: the
    #: base-URL variable.
    override_hint: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        env = os.environ if env is None else env
        contact = env.get(CONTACT_ENV, "").strip()
        if self.contact_required and not contact:
            raise MissingContact(self.source)
        self.base_url = (env.get(self.base_url_env(), "").strip()
                         or self.default_base_url).rstrip("/")
        agent = f"needle-evals/{__version__}"
        self.user_agent = f"{agent} ({contact})" if contact else agent
        self.retry = replace(retry or RetryPolicy(), retry_unreachable=False)
        self.stats = SourceStats()
        self._unreachable: dict[str, SourceUnreachable] = {}
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        self._limit = RateLimit(self.min_interval, sleep=sleep, clock=clock)
        self._slots = asyncio.Semaphore(self.max_in_flight)

    @classmethod
    def base_url_env(cls) -> str:
        return f"NEEDLE_{cls.source.upper().replace('-', '_')}_BASE_URL"

    def override(self) -> str:
        return self.override_hint or (f"set {self.base_url_env()} to a mirror or a local fake "
                                      f"(needle serve sources)")

    def headers(self) -> dict[str, str]:
        """Headers sent with every request; subclasses add auth (a token from the env)."""
        return {"User-Agent": self.user_agent}

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"

    async def get(self, path: str, *, params: Mapping[str, Any] | None = None,
                  headers: Mapping[str, str] | None = None) -> httpx.Response:
        """One successful GET; ``SourceError`` for a final failure (status kept for callers)."""
        url = self.url(path)
        http = self._http()
        request = http.build_request(
            "GET", url, params=params, headers={**self.headers(), **(headers or {})},
            timeout=self.timeout,
        )
        host = host_of(url)
        self._raise_if_unreachable(host)
        async with self._slots:
            await self._limit.wait()
            self._raise_if_unreachable(host)
            self.stats.requests += 1
            try:
                sent = await send(http, request, self.retry, self._sleep,
                                  BodyLimits(self.timeout, self.max_response_bytes))
            except RetriesExhausted as exc:
                self.stats.retries += exc.attempts - 1
                self.stats.errors += 1
                if is_unreachable(exc.error):
                    self._unreachable[host] = SourceUnreachable(
                        self.source, url, why_unreachable(exc.error), self.override())
                    self._raise_if_unreachable(host)
                raise SourceError(self.source, url, f"{exc} after {exc.attempts} attempt(s)") \
                    from exc
        self.stats.retries += sent.retries
        response = sent.response
        if not response.is_success:
            self.stats.errors += 1
            excerpt = redact_then_cut(response.text, _EXCERPT)
            raise SourceError(self.source, url, f"HTTP {response.status_code}: {excerpt}",
                              status=response.status_code)
        if is_truncated(response):
            self.stats.errors += 1
            raise SourceError(self.source, url, f"response larger than the "
                              f"{self.max_response_bytes}-byte cap (max_response_bytes)")
        return response

    def _raise_if_unreachable(self, host: str) -> None:
        """Requests after the host was found unreachable fail at once, without a connection."""
        seen = self._unreachable.get(host)
        if seen is not None:
            raise SourceUnreachable(seen.source, seen.url, seen.reason, seen.override)

    async def get_json(self, path: str, *, params: Mapping[str, Any] | None = None,
                       headers: Mapping[str, str] | None = None) -> JSON:
        """The decoded body, as the source sent it: callers narrow it (``isinstance``) and
        name the source and field when it is not the documented shape."""
        response = await self.get(path, params=params, headers=headers)
        try:
            return loads_untrusted(response.content)
        except ValueError as exc:
            excerpt = redact_then_cut(response.text, 60)
            raise SourceError(self.source, str(response.url),
                              f"not JSON ({exc}; starts {excerpt!r})") from None

    async def get_text(self, path: str, *, params: Mapping[str, Any] | None = None,
                       headers: Mapping[str, str] | None = None) -> str:
        return (await self.get(path, params=params, headers=headers)).text

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=True)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

