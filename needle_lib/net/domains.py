"""Registrable domains ("investor.apple.com/x" → "apple.com") from the bundled suffix list.

The Public Suffix List decides where a registrable domain starts ("bbc.co.uk", not
"co.uk"). ``tldextract`` ships a snapshot of it; we use only that snapshot
(``suffix_list_urls=()``, no cache directory), so generation and matching never touch the
network for it and two machines always agree on a domain.
"""

from __future__ import annotations

import tldextract

_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def registrable_domain(url: str) -> str | None:
    """The lowercased registrable domain of a URL or host name; None for hosts without one
    (IP addresses, ``localhost``, bare public suffixes)."""
    parts = _EXTRACT(url.strip())
    if not parts.suffix or not parts.domain:
        return None
    return parts.top_domain_under_public_suffix.lower()
