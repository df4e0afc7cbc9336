"""Is a host there at all? The words for why not, and a quick probe for clients we do not own.

A refused connection or a name that does not resolve means offline or a wrong host: it does
not heal within a retry's backoff, so the useful thing is to say so at once, naming the host.
``SourceClient`` learns it from its own failed request; a third-party client that retries on
its own (``huggingface_hub`` spends ~25 s) is asked ``unreachable`` first.
"""

from __future__ import annotations

import socket

import httpx

#: Seconds a probe waits for the TCP handshake: a dropped (firewalled) connection is as
#: unreachable as a refused one, and a live host answers in well under this.
PROBE_TIMEOUT = 5.0


def why_unreachable(error: BaseException) -> str:
    """Why no connection was made, in a few words: the deepest OS error says it best."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"name not resolved: {cause.strerror}"
        if isinstance(cause, TimeoutError):
            return "no answer"
        cause = cause.__cause__ or cause.__context__
    return " ".join(str(error).split())[:120] or type(error).__name__


def host_of(url: str) -> str:
    """``host[:port]`` of ``url``, as a person would type it."""
    return httpx.URL(url).netloc.decode("ascii", "replace") or url


def unreachable(url: str, *, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when a TCP connection to ``url``'s host opens, else why it does not."""
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.host, port), timeout=timeout):
            return None
    except OSError as exc:
        return why_unreachable(exc)
