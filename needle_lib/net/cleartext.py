"""A warning, once, when an API key is about to travel in clear text to another machine.

Why: a model config or engine points at ``https://`` and carries a key; ``--base-url
http://gpu-box:8000`` (or ``NEEDLE_<ENGINE>_BASE_URL``) redirects it, and every request then
sends the key as a plain-HTTP header that anyone on the path can read. Plain HTTP to this
machine (LM Studio, llama.cpp, a loopback fake) is the normal local setup and stays quiet;
so does a request with no key. The request is still sent — a LAN server without TLS is a
real setup — but the user is told once per process and destination, not once per request.
"""

from __future__ import annotations

import ipaddress
import threading
import warnings
from urllib.parse import urlsplit

from needle_lib.errors import NeedleError

_warned: set[str] = set()
_lock = threading.Lock()


class CleartextKeyWarning(NeedleError, UserWarning):
    """An API key will be sent over plain HTTP to a host that is not this machine."""


def is_loopback_host(host: str) -> bool:
    """``localhost`` (and ``*.localhost``, which resolvers keep on this machine), 127.0.0.0/8
    and ``::1``. Any other name may resolve anywhere, so it does not count."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cleartext_destination(url: str) -> str | None:
    """``host[:port]`` when ``url`` is plain HTTP to a host that is not loopback, else None."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "http" or not parts.hostname:
        return None
    if is_loopback_host(parts.hostname):
        return None
    return parts.netloc.rpartition("@")[2]  # never echo credentials embedded in the URL


def warn_cleartext_key(url: str, *, who: str, key: str | None) -> bool:
    """Warn (``CleartextKeyWarning``) the first time this process is about to send ``who``'s
    API key over plain HTTP to ``url``'s host; True when this call warned."""
    if not key:
        return False
    destination = cleartext_destination(url)
    if destination is None:
        return False
    with _lock:
        if destination in _warned:
            return False
        _warned.add(destination)
    warnings.warn(
        f"{who}: its API key will be sent unencrypted (plain http://) to {destination}, "
        "which is not this machine; anyone on the network path can read it. Check the base "
        "URL (--base-url, the config's base_url, NEEDLE_<ENGINE>_BASE_URL): use https://, "
        "or reach the server through a tunnel to localhost.",
        CleartextKeyWarning, stacklevel=3)
    return True


def forget_warnings() -> None:
    """Start over (tests): the next cleartext key warns again."""
    with _lock:
        _warned.clear()
