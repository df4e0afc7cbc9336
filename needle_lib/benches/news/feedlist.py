"""The RSS feed list: ``[[source]]`` tables with ``url``, ``source_kind``, ``topical_domain``.

The default list (``fixtures/news-feeds.default.toml``, 124 public feeds, provenance in
``fixtures/PROVENANCE.toml``) is data, not code: users edit a copy and pass ``--feeds``.
A kind or domain outside the known sets is an error naming the file and the entry, since a
typo would otherwise move a feed's queries into the wrong stratum or freshness window.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from needle_lib.paths import FIXTURES_DIR
from needle_lib.tomlconf import ConfigError, Key, check_section, load_toml

DEFAULT_FEEDS = FIXTURES_DIR / "news-feeds.default.toml"

RSS_KINDS = ("rss_news", "rss_release", "rss_blog", "rss_paper", "rss_social")
TOPICAL_DOMAINS = (
    "sports", "finance", "tech", "health", "weather", "local_civic", "entertainment",
    "gaming", "commerce", "government", "science", "education", "travel", "automotive",
    "other",
)
_SCHEMA = {
    "url": Key((str,), required=True),
    "source_kind": Key((str,), required=True),
    "topical_domain": Key((str,), required=True),
}


@dataclass(frozen=True)
class Feed:
    url: str
    source_kind: str
    topical_domain: str


def load_feeds(path: Path = DEFAULT_FEEDS) -> list[Feed]:
    """Every ``[[source]]`` of ``path`` in file order; duplicates of a URL are an error."""
    data = load_toml(path)
    sources = data.get("source")
    if not isinstance(sources, list) or not sources:
        raise ConfigError(f"{path}: no [[source]] entries")
    unknown = sorted(set(data) - {"source"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key(s) {', '.join(unknown)}")
    feeds: list[Feed] = []
    seen: set[str] = set()
    for number, entry in enumerate(sources, start=1):
        section = f"source #{number}"
        table = check_section(entry, _SCHEMA, path=path, section=section)
        for key, allowed in (("source_kind", RSS_KINDS), ("topical_domain", TOPICAL_DOMAINS)):
            if table[key] not in allowed:
                raise ConfigError(f"{path}: [{section}] {key} {table[key]!r} is not one of "
                                  f"{', '.join(allowed)}")
        if not table["url"].startswith(("http://", "https://")):
            raise ConfigError(f"{path}: [{section}] url {table['url']!r} is not an http(s) URL")
        if table["url"] in seen:
            raise ConfigError(f"{path}: [{section}] url {table['url']!r} is listed twice")
        seen.add(table["url"])
        feeds.append(Feed(table["url"], table["source_kind"], table["topical_domain"]))
    return feeds
