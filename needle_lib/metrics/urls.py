"""URL identity for pooling, deduplication and overlap: two spellings of one page are one URL.

Engines return the same page as ``http://www.x.com/a/``, ``https://x.com/a#top`` or
``https://x.com/a?utm_source=feed``; counting those as different pages would reward an engine
for repeating itself and split one page's rating across the pool.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, quote, unquote_to_bytes, urlencode, urlsplit

#: Query parameters that track the click, not the content (``utm_*`` is matched by prefix),
#: grouped by who appends them. Names are compared lower-cased.
TRACKING_PARAMS = frozenset(
    {
        # search engines' click ids: Google Ads, Google's organic-result id (srsltid), Bing,
        # Microsoft's cross-site id (msockid), Yandex
        "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "gad_source", "srsltid",
        "msclkid", "msockid", "yclid", "ysclid",
        # social networks: Facebook, Instagram, X/Twitter, TikTok, LinkedIn, Pinterest, Snap
        "fbclid", "igshid", "igsh", "twclid", "ttclid", "li_fat_id", "epik", "sccid",
        # e-mail and marketing suites: Mailchimp, HubSpot, Marketo, Vero, Omeda, Salesforce
        "mc_cid", "mc_eid", "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "hsctatracking",
        "mkt_tok", "vero_id", "vero_conv", "oly_anon_id", "oly_enc_id", "sfmc_id",
        # analytics cookies carried in links: Google Analytics, Adobe
        "_ga", "_gl", "s_cid", "s_kwcid",
        # publishers' campaign and share tags: Guardian (CMP), NYT (smid), MSN (ocid), Yahoo
        # (guccounter, guce_*), Alibaba (spm), generic referrer tags
        "cmp", "cmpid", "smid", "ocid", "ncid", "icid", "guccounter", "guce_referrer",
        "guce_referrer_sig", "spm", "ref", "ref_src", "ref_url", "referrer",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


#: Characters whose escaped and literal spellings mean different paths (RFC 3986 reserved,
#: plus ``%`` itself): they stay escaped, with upper-case hex.
_RESERVED = frozenset("/?#[]@!$&'()*+,;=%")
_ESCAPE_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _decoded_run(match: re.Match[str]) -> str:
    """One run of percent-escapes, decoded where the escape carries no meaning of its own."""
    raw = unquote_to_bytes(match.group(0))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return match.group(0).upper()  # not UTF-8: keep the bytes, spelled one way
    return "".join(quote(ch, safe="") if _stays_escaped(ch) else ch for ch in text)


def _stays_escaped(ch: str) -> bool:
    """Reserved characters keep their meaning only escaped. Controls and whitespace of any
    kind (``%0B``, ``%C2%A0``, ``%E2%80%A8``) stay escaped too: decoded, the next pass would
    strip or drop them (``str.strip``, ``urlsplit``), so one URL would have two keys."""
    return ch in _RESERVED or ch.isspace() or not ch.isprintable()


def escape_unprintable(text: str) -> str:
    """Literal spaces, other whitespace and controls percent-escaped (UTF-8), so a key holds
    none: ``a\u00a0b`` and ``a%C2%A0b`` are one page, and a key is one token wherever keys
    are written whitespace-separated (TREC run files and qrels)."""
    if text.isprintable() and " " not in text:
        return text
    return "".join(quote(ch, safe="") if ch == " " or not ch.isprintable() else ch
                   for ch in text)


def decode_path(path: str) -> str:
    """``caf%C3%A9`` and ``café`` as one spelling (the decoded one); ``%2F`` stays escaped,
    because ``a%2Fb`` is one path segment and ``a/b`` two; literal whitespace and controls
    are escaped."""
    return escape_unprintable(_ESCAPE_RUN.sub(_decoded_run, path))


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMS


def _without_www(host: str) -> str:
    """``www.`` labels dropped while a registrable name is left: ``www.www.example.com`` is
    ``example.com``, but ``www.com`` stays (dropping it would leave a bare TLD, and a second
    pass would then disagree with the first)."""
    while host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return host


@lru_cache(maxsize=65536)  # pooled metrics ask about the same URL many times per report
def normalize_url(url: str) -> str:
    """A scheme-less canonical key: ``host[/path][?query]``.

    Lower-cases the host, strips ``www.``, default ports, the fragment, tracking parameters and
    a trailing slash; decodes percent-escapes in the path that do not change its meaning;
    sorts the remaining query parameters. Path case is kept (paths are case-sensitive on most
    servers). The key holds no whitespace or control character: those are escaped.
    """
    text = url.strip()
    if "://" not in text:
        text = f"http://{text.lstrip('/')}"
    try:
        parts = urlsplit(text)
    except ValueError:  # an unbalanced "[" in the host: no host to canonicalise, keep it all
        return escape_unprintable(text.split("://", 1)[1].lstrip("/"))
    host = escape_unprintable(_without_www((parts.hostname or "").lower().rstrip(".")))
    if ":" in host:  # an IPv6 literal keeps its brackets, so the key parses back to it
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = decode_path(parts.path).rstrip("/")
    params = sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)
    )
    query = f"?{urlencode(params)}" if params else ""
    return f"{host}{path}{query}"
