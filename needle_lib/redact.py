"""Secrets out of every text Needle keeps: error excerpts, logged URLs, reports.

Why one function: cutting a server's error body *before* scrubbing the key leaves all but
the cut-off tail of a key that straddles the cut (``sk-LEAKCANAR…``). ``redact_then_cut``
scrubs first, then flattens and cuts, and every place that keeps error text calls it.

Secrets are known two ways: values passed by the caller (the key a client holds), and a
process-wide registry every key resolver adds to (``register_secret``), so text that
reaches a log or a dump through some other path is scrubbed too. URLs additionally lose
the values of query parameters that carry keys (``api_key=…``), whatever the value.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from needle_lib.net.bodies import body_excerpt

MASK = "***"
#: Secrets shorter than this are not registered: masking "a" everywhere would garble text.
_MIN_SECRET = 4
#: Query parameters whose value is a credential however the engine names it.
SECRET_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "token", "access_token", "auth", "secret",
    "x-api-key", "subscription-key", "client_secret", "password",
})

_registry: set[str] = set()
_secret_params: set[str] = set(SECRET_PARAMS)
_lock = threading.Lock()
_QUERY_PART = re.compile(r"([?&])([^=&\s#\"']+)=([^&\s#\"']*)")


def register_secret(value: str | None) -> None:
    """Remember a secret value so every later ``redact`` scrubs it (keys, tokens), and
    scrub the HTTP libraries' logs from now on."""
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _registry.add(value)
        install_log_redaction()


def register_secret_param(name: str) -> None:
    """Mark a query-parameter name as carrying a credential (a config engine's key)."""
    with _lock:
        _secret_params.add(name.lower())
    install_log_redaction()


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret value and every secret query-parameter value masked."""
    with _lock:
        known = {*_registry, *(s for s in secrets if s and len(s) >= _MIN_SECRET)}
        params = frozenset(_secret_params)
    for secret in sorted(known, key=len, reverse=True):  # longest first: no partial leftovers
        text = text.replace(secret, MASK)
    return _QUERY_PART.sub(
        lambda m: f"{m[1]}{m[2]}={MASK}" if m[2].lower() in params and m[3] else m[0], text)


def redact_then_cut(text: str, limit: int, secrets: Iterable[str | None] = ()) -> str:
    """A single-line, secret-free excerpt of at most ``limit`` characters (plus "…"); an
    HTML page becomes one line naming its title (``net.bodies.body_excerpt``)."""
    return body_excerpt(redact(text, secrets), limit)


def redact_url(url: str, secrets: Iterable[str | None] = ()) -> str:
    """``url`` with secret query values masked (parsed, so encoded values are caught too)."""
    parts = urlsplit(url)
    if not parts.query:
        return redact(url, secrets)
    with _lock:
        params = frozenset(_secret_params)
    pairs = [(k, MASK if k.lower() in params and v else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    query = urlencode(pairs, safe="*")
    return redact(urlunsplit(parts._replace(query=query)), secrets)


class RedactingFilter(logging.Filter):
    """Scrubs secrets from log records (httpx logs every request URL at INFO/DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


#: httpx logs each request line on "httpx"; httpcore's trace lines on its submodules (a
#: logger's filters do not apply to its children's records, so each is named).
_FILTERED_LOGGERS = ("httpx", "httpcore.connection", "httpcore.http11", "httpcore.http2",
                     "httpcore.proxy")
_installed = False


def install_log_redaction() -> None:
    """Attach ``RedactingFilter`` to the HTTP libraries' loggers (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    for name in _FILTERED_LOGGERS:
        logging.getLogger(name).addFilter(RedactingFilter())
