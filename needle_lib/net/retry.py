"""The one retry policy for every outbound HTTP call: engines, the judge, the LLM, sources.

Why it looks like this:
- only 429 and 500/502/503/504 are retried, plus transport failures: those are transient
  (rate limits, a proxy or server restarting); any other status repeats identically and only
  burns quota;
- a server's ``Retry-After`` (seconds or an HTTP date) beats our own guess, capped so that one
  answer of "come back tomorrow" cannot stall a benchmark run;
- otherwise exponential backoff from 1 s, capped at 30 s: keyless and rate-limited endpoints
  (Keenable's public search, SEC's 10 requests/s) need seconds, not milliseconds, to recover;
- timeouts are retried by default (a rate-limited API often answers slowly before it answers
  429), but a caller whose single request may legitimately take minutes can opt out;
- a refused connection or a failed name lookup is retried by default (a local model server
  restarting refuses for a moment), but a caller for whom it means "offline" or "wrong host"
  (the public sources) opts out: backing off from it only delays the one useful message.

``Attempts`` holds the decision logic once; ``send`` (raw httpx) and the chat clients only
do the I/O around it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from needle_lib.errors import NeedleError
from needle_lib.net.body import BodyLimits, read_async

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})

Sleep = Callable[[float], Awaitable[None]]


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date); None if unusable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000" dates parse as naive; HTTP dates are always UTC
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all; the wait before retry n is ``base_delay * 2**(n-1)``, capped,
    unless the server said how long to wait (``Retry-After``, capped at ``max_retry_after``)."""

    attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 30.0
    retry_timeouts: bool = True
    retry_unreachable: bool = True

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be >= 1, got {self.attempts}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("RetryPolicy delays must be >= 0")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based) before the next one."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return min(self.max_delay, self.base_delay * 2 ** (attempt - 1))

    def retryable_status(self, status: int) -> bool:
        return status in RETRYABLE_STATUSES

    def retryable_exception(self, exc: httpx.TransportError) -> bool:
        if isinstance(exc, httpx.TimeoutException):
            return self.retry_timeouts
        return self.retry_unreachable or not is_unreachable(exc)


def is_unreachable(exc: httpx.TransportError) -> bool:
    """A connection that could not be made at all: refused, or the name did not resolve."""
    return isinstance(exc, httpx.ConnectError)


class Attempts:
    """The retry decisions for one logical request: how many tries so far, and what next."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.attempt = 0

    @property
    def retries(self) -> int:
        return max(0, self.attempt - 1)

    def start(self) -> None:
        self.attempt += 1

    def next_delay(self, *, retryable: bool, retry_after: float | None = None) -> float | None:
        """Seconds to wait before trying again, or None: give up (or nothing to retry)."""
        if not retryable or self.attempt >= self.policy.attempts:
            return None
        return self.policy.delay(self.attempt, retry_after)

    def after(self, outcome: httpx.Response | httpx.TransportError) -> float | None:
        """``next_delay`` for a raw HTTP outcome: a response, or the transport error raised."""
        if isinstance(outcome, httpx.TransportError):
            return self.next_delay(retryable=self.policy.retryable_exception(outcome))
        if outcome.is_success:
            return None
        return self.next_delay(
            retryable=self.policy.retryable_status(outcome.status_code),
            retry_after=parse_retry_after(outcome.headers.get("Retry-After")),
        )


class RetriesExhausted(NeedleError):
    """A transport error that outlived the policy; ``attempts`` says how many tries it took."""

    def __init__(self, error: httpx.TransportError, attempts: int) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error
        self.attempts = attempts

    @property
    def timed_out(self) -> bool:
        return isinstance(self.error, httpx.TimeoutException)


@dataclass(frozen=True)
class Sent:
    """The final response of a request (success or a non-retryable/last error status)."""

    response: httpx.Response
    attempts: int

    @property
    def retries(self) -> int:
        return self.attempts - 1


def _final(attempts: Attempts, outcome: httpx.Response | httpx.TransportError) -> Sent:
    if isinstance(outcome, httpx.TransportError):
        raise RetriesExhausted(outcome, attempts.attempt) from outcome
    return Sent(outcome, attempts.attempt)


async def send(
    client: httpx.AsyncClient, request: httpx.Request, policy: RetryPolicy, sleep: Sleep,
    limits: BodyLimits,
) -> Sent:
    """Send ``request`` under ``policy``, each attempt bounded by ``limits`` (a total
    deadline and a body cap); raises ``RetriesExhausted`` for a transport failure."""
    attempts = Attempts(policy)
    while True:
        attempts.start()
        try:
            outcome: httpx.Response | httpx.TransportError = await read_async(
                client, request, limits)
        except httpx.TransportError as exc:
            outcome = exc
        delay = attempts.after(outcome)
        if delay is None:
            return _final(attempts, outcome)
        await sleep(delay)

