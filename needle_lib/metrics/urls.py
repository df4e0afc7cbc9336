"""URL identity for pooling, deduplication and overlap: two spellings of one page are one URL.

Engines return the same page as ``http://www.x.com/a/``, ``https://x.com/a#top`` or
``https://x.com/a?utm_source=feed``; counting those as different pages would reward an engine
for repeating itself and split one page's rating across the pool.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit

#: Query parameters that track the click, not the content (``utm_*`` is matched by prefix).
TRACKING_PARAMS = frozenset(
    {
        "gclid",
        "gclsrc",
        "dclid",
        "fbclid",
        "msclkid",
        "yclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "ref",
        "ref_src",
        "ref_url",
        "_ga",
        "_gl",
        "spm",
        "cmpid",
        "ocid",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMS


@lru_cache(maxsize=65536)  # pooled metrics ask about the same URL many times per report
def normalize_url(url: str) -> str:
    """A scheme-less canonical key: ``host[/path][?query]``.

    Lower-cases the host, strips ``www.``, default ports, the fragment, tracking parameters and
    a trailing slash; sorts the remaining query parameters. Path case is kept (paths are
    case-sensitive on most servers).
    """
    text = url.strip()
    if "://" not in text:
        text = f"http://{text.lstrip('/')}"
    parts = urlsplit(text)
    host = (parts.hostname or "").lower().rstrip(".").removeprefix("www.")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    params = sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)
    )
    query = f"?{urlencode(params)}" if params else ""
    return f"{host}{path}{query}"
