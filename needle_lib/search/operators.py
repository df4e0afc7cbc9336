"""Google-style query operators, parsed once so every engine translates the same facts.

Benchmarks write queries the way people type them into Google (``site:sec.gov after:2025-01-01
"net income"``). Engines that do not understand those tokens would search for them literally,
which silently measures a different query; so each client gets a ``ParsedQuery`` and maps the
operators to its native filters or drops them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from needle_lib.clock import utc_today

_TOKEN = re.compile(r'"[^"]*"|\S+')
_OPERATOR = re.compile(r"(?i)^(site|after|before):(\S+)$")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EPOCH = date(1970, 1, 1)


@dataclass(frozen=True)
class ParsedQuery:
    """The free text (quoted phrases kept, operators removed) and the operators found.

    A token that only looks like an operator (``site:gov``, ``after:yesterday``) stays in
    ``text``: dropping it would silently search for something shorter than the user typed.
    """

    text: str
    sites: tuple[str, ...] = ()
    after: date | None = None
    before: date | None = None
    phrases: tuple[str, ...] = ()

    @property
    def has_dates(self) -> bool:
        return self.after is not None or self.before is not None

    def closed_range(self) -> str | None:
        """``YYYY-MM-DDtoYYYY-MM-DD`` (Brave / You.com freshness), open ends filled in.

        Those APIs only take a closed range, so a lone ``after:`` runs to today (UTC) and a
        lone ``before:`` starts at 1970-01-01 — the widest range that keeps the operator's meaning.
        """
        if not self.has_dates:
            return None
        low = self.after or EPOCH
        high = self.before or utc_today()
        return f"{low.isoformat()}to{high.isoformat()}"

    @property
    def is_empty(self) -> bool:
        """Nothing to search for: no text and no operator."""
        return not self.text and not self.sites and not self.has_dates

    def site_terms(self) -> tuple[str, ...]:
        """``site:<host>`` per site, for engines that read operators in the query text."""
        return tuple(f"site:{site}" for site in self.sites)

    def site_clause(self) -> str:
        """The sites as one Google-syntax clause: ``site:a`` or ``(site:a OR site:b)``."""
        clause = " OR ".join(self.site_terms())
        return f"({clause})" if len(self.sites) > 1 else clause

    def text_with_sites(self) -> str:
        """The text with ``site:`` re-attached, for engines where Google syntax is native."""
        return f"{self.text} {self.site_clause()}".strip()


def parse_query(query: str) -> ParsedQuery:
    """Split ``query`` into text and operators; operators inside quotes stay text."""
    words: list[str] = []
    sites: list[str] = []
    phrases: list[str] = []
    after: date | None = None
    before: date | None = None
    for token in _TOKEN.findall(query):
        if token.startswith('"'):
            words.append(token)
            if token.strip('"'):
                phrases.append(token.strip('"'))
            continue
        match = _OPERATOR.match(token)
        if match is None:
            words.append(token)
            continue
        name, value = match.group(1).lower(), match.group(2)
        if name == "site":
            host = site_host(value)
            if host is None:
                words.append(token)
            elif host not in sites:
                sites.append(host)
            continue
        day = _iso_day(value)
        if day is None:
            words.append(token)
        elif name == "after":
            after = day
        else:
            before = day
    return ParsedQuery(
        text=" ".join(words),
        sites=tuple(sites),
        after=after,
        before=before,
        phrases=tuple(phrases),
    )


def site_host(value: str) -> str | None:
    """The host a ``site:`` value names (``https://SEC.gov/cgi-bin/x`` → ``sec.gov``).

    Domain filters take a host, so scheme, path, query and port are dropped; a value without
    a dot (``site:gov``) is not a host and returns None.
    """
    host = value.lower().split("://", 1)[-1]
    host = re.split(r"[/?#]", host, maxsplit=1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
    host = host.strip(".")
    return host if "." in host else None


def _iso_day(value: str) -> date | None:
    """A strict ``YYYY-MM-DD`` date, or None (``date.fromisoformat`` also takes week dates)."""
    if not _ISO_DAY.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def us_date(day: date) -> str:
    """``M/D/YYYY``, the date form Google's ``tbs`` and Perplexity's date filters take."""
    return f"{day.month}/{day.day}/{day.year}"
