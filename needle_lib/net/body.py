"""Reading a response body from a server Needle does not control: bounded in time and size.

Why: httpx's ``timeout`` bounds each network read, not the response, so a server that
streams forever (or drips a byte a second) kept one attempt alive for the whole stream; and
a response is read whole, so a 50 MB answer (or 1 MB of gzip that inflates to 1 GiB) landed
in memory, the dump and the HTML report. Every outbound request of the shared HTTP path is
therefore sent with ``stream=True`` and read here:

- ``BodyLimits.deadline_s`` is a total per-attempt deadline (connect to last byte); past it
  the attempt fails as a timeout (``AttemptDeadline``, an ``httpx.ReadTimeout``), which the
  shared retry policy treats like any other timeout;
- at most ``BodyLimits.max_bytes`` *decoded* bytes are kept: we inflate gzip/deflate
  ourselves with ``max_length``, so a compression bomb costs the cap, not its inflated size;
  the head is kept and the response says it was cut (``is_truncated``); callers decide
  whether a cut body is still usable (a chat answer's head is, a search page's is not).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from needle_lib.errors import NeedleError

MiB = 1024 * 1024
#: The longest deadline Needle accepts (a day). Longer than any answer or search takes, and
#: far below the OS timers' range: ``--request-timeout 1e10`` passed the "positive and
#: finite" checks, then every request failed with an ``OverflowError`` (time_t), so every
#: case ERRORed instead of the run stopping at load with the key named.
MAX_TIMEOUT_S = 86_400.0
#: Decoders we accept; asking only for these keeps brotli/zstd bombs out of reach.
ACCEPT_ENCODING = "gzip, deflate"
_TRUNCATED = "needle_truncated"
_DROPPED_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


@dataclass(frozen=True)
class BodyLimits:
    """What one attempt may cost: ``deadline_s`` of wall time and ``max_bytes`` of body."""

    deadline_s: float
    max_bytes: int

    def __post_init__(self) -> None:
        if not 0 < self.deadline_s <= MAX_TIMEOUT_S:
            raise ValueError(f"deadline must be > 0 and at most {MAX_TIMEOUT_S:g} seconds, "
                             f"got {self.deadline_s}")
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {self.max_bytes}")


class AttemptDeadline(httpx.ReadTimeout, NeedleError):
    """The attempt outlived its total deadline (the server kept sending, or stalled)."""


class UnreadableBody(httpx.RemoteProtocolError, NeedleError):
    """The body cannot be decoded (an encoding we did not ask for, or corrupt gzip)."""


def is_truncated(response: httpx.Response) -> bool:
    """Whether Needle kept only the head of this response's body (``max_bytes``)."""
    return bool(response.extensions.get(_TRUNCATED))


def prepare(request: httpx.Request) -> httpx.Request:
    """Ask only for encodings ``_Collector`` can inflate under a cap."""
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    return request


class _Collector:
    """Decodes raw chunks into at most ``limit`` bytes; knows when to stop reading."""

    def __init__(self, response: httpx.Response, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated = False
        self._decoder = None if response.is_stream_consumed else _decoder(response)

    def feed(self, chunk: bytes) -> bool:
        """Take one raw chunk; True once the cap is reached (stop reading)."""
        room = self.limit - self.size
        data = self._decoder(chunk, room + 1) if self._decoder else chunk[: room + 1]
        if len(data) > room:
            data, self.truncated = data[:room], True
        self.parts.append(data)
        self.size += len(data)
        return self.truncated

    def take_read(self, sent: httpx.Response) -> None:
        """An in-process transport (the reference model, ``MockTransport``) hands back a
        response already read and decoded: only the cap applies."""
        self.feed(sent.content)

    def response(self, sent: httpx.Response) -> httpx.Response:
        headers = [
            (k, v) for k, v in sent.headers.multi_items() if k.lower() not in _DROPPED_HEADERS
        ]
        return httpx.Response(
            sent.status_code,
            headers=headers,
            content=b"".join(self.parts),
            request=sent.request,
            extensions={**sent.extensions, _TRUNCATED: self.truncated},
        )


class _Inflater:
    """gzip or zlib-wrapped deflate, detected from the header (``32 + MAX_WBITS``); raw
    deflate, a common server bug, is tried when the first chunk fails."""

    def __init__(self, request: httpx.Request) -> None:
        self._request = request
        self._inflate = zlib.decompressobj(32 + zlib.MAX_WBITS)
        self._started = False

    def __call__(self, chunk: bytes, max_length: int) -> bytes:
        try:
            out = self._inflate.decompress(chunk, max_length)
        except zlib.error:
            if self._started:
                raise self._corrupt() from None
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            try:
                out = self._inflate.decompress(chunk, max_length)
            except zlib.error:
                raise self._corrupt() from None
        self._started = True
        return out

    def _corrupt(self) -> UnreadableBody:
        return UnreadableBody("corrupt compressed body", request=self._request)


def _decoder(response: httpx.Response) -> _Inflater | None:
    encodings = [
        e.strip().lower()
        for e in response.headers.get("content-encoding", "").split(",")
        if e.strip() and e.strip().lower() != "identity"
    ]
    if not encodings:
        return None
    if len(encodings) > 1 or encodings[0] not in ("gzip", "x-gzip", "deflate"):
        raise UnreadableBody(
            f"unsupported Content-Encoding {', '.join(encodings)!r} "
            f"(Needle asks for {ACCEPT_ENCODING})",
            request=response.request,
        )
    return _Inflater(response.request)


def read_sync(
    client: httpx.Client,
    request: httpx.Request,
    limits: BodyLimits,
    clock: Callable[[], float] = time.monotonic,
) -> httpx.Response:
    """Send and read one attempt; the deadline is checked between chunks, and a server that
    stops sending is cut by httpx's own read timeout (so the worst case is one read timeout
    past the deadline)."""
    deadline = clock() + limits.deadline_s
    sent = client.send(prepare(request), stream=True)
    try:
        collector = _Collector(sent, limits.max_bytes)
        if sent.is_stream_consumed:
            collector.take_read(sent)
            return collector.response(sent)
        for chunk in sent.iter_raw():
            if collector.feed(chunk):
                break
            if clock() > deadline:
                raise _deadline(request, limits)
        return collector.response(sent)
    finally:
        sent.close()


async def read_async(
    client: httpx.AsyncClient, request: httpx.Request, limits: BodyLimits
) -> httpx.Response:
    """Async twin of ``read_sync``; here the deadline is exact (``asyncio.timeout``)."""
    import asyncio  # here, not at the top: a recall run reads synchronously only

    try:
        async with asyncio.timeout(limits.deadline_s), _streamed(client, prepare(request)) as sent:
            collector = _Collector(sent, limits.max_bytes)
            if sent.is_stream_consumed:
                collector.take_read(sent)
                return collector.response(sent)
            async for chunk in sent.aiter_raw():
                if collector.feed(chunk):
                    break
            return collector.response(sent)
    except TimeoutError:
        raise _deadline(request, limits) from None


@asynccontextmanager
async def _streamed(
    client: httpx.AsyncClient, request: httpx.Request
) -> AsyncIterator[httpx.Response]:
    sent = await client.send(request, stream=True)
    try:
        yield sent
    finally:
        await sent.aclose()


def _deadline(request: httpx.Request, limits: BodyLimits) -> AttemptDeadline:
    return AttemptDeadline(
        f"the response did not complete within the {limits.deadline_s:g}s deadline", request=request
    )
