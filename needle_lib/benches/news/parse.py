"""Feed documents → items: RSS/Atom with feedparser, the Google Trends RSS with ElementTree.

feedparser is the field's parser for RSS 0.9x/1.0/2.0 and Atom (namespaces, date formats,
encodings, HTML in titles). The Trends feed needs one thing feedparser cannot give: each
topic carries several ``ht:news_item`` elements, and feedparser keeps only the last of
repeated namespaced elements, so Trends is parsed with ElementTree.

A document that declares XML entities is refused before either parser sees it: no real feed
needs them, and they are how an "XML bomb" (billion laughs) turns a few hundred bytes into
gigabytes. Refusing is simpler to trust than any parser's expansion limits.
"""

from __future__ import annotations

import calendar
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from typing import Any

import feedparser

from needle_lib.benches.news.feedlist import Feed
from needle_lib.errors import NeedleError

TRENDS_NS = "https://trends.google.com/trending/rss"
MAX_NEWS_ITEMS = 5


class FeedParseError(NeedleError, ValueError):
    """The document is not a usable feed (broken XML with no items, an HTML page, a DTD)."""


@dataclass(frozen=True)
class FeedItem:
    feed: Feed
    title: str
    summary: str
    url: str
    published: datetime


@dataclass(frozen=True)
class NewsItem:
    title: str
    url: str
    source: str


@dataclass(frozen=True)
class Trend:
    topic: str
    traffic: int
    approx_traffic: str
    published: datetime
    geos: tuple[str, ...]
    news_items: tuple[NewsItem, ...]


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def plain_text(html: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed (feeds put markup in titles)."""
    parser = _TextOnly()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


def _entry_time(entry: Any) -> datetime | None:
    stamp = entry.get("published_parsed") or entry.get("updated_parsed")
    if stamp is None:
        return None
    return datetime.fromtimestamp(calendar.timegm(stamp), tz=UTC)


def _refuse_entities(document: bytes, what: str) -> None:
    if b"<!ENTITY" in document.upper():
        raise FeedParseError(f"{what}: the document declares XML entities (refused)")


def parse_feed(document: bytes, feed: Feed) -> list[FeedItem]:
    """The dated items of an RSS or Atom document; items without title, link or date are
    dropped (they cannot be projected, cited or aged)."""
    _refuse_entities(document, feed.url)
    parsed = feedparser.parse(document)
    items = []
    for entry in parsed.entries:
        title = plain_text(entry.get("title", ""))
        url = str(entry.get("link", "")).strip()
        published = _entry_time(entry)
        if title and url and published is not None:
            summary = plain_text(entry.get("summary", ""))
            items.append(FeedItem(feed, title, summary, url, published))
    if not items and (parsed.bozo or not parsed.version):
        reason = parsed.get("bozo_exception") or "not an RSS or Atom document"
        raise FeedParseError(f"{feed.url}: unusable feed ({reason})")
    return items


def parse_traffic(text: str) -> int:
    """``"2,000+"`` → 2000, ``"50K+"`` → 50000, ``"1M+"`` → 1000000; unreadable → 0."""
    match = re.fullmatch(r"\s*([\d,.]+)\s*([KkMm]?)\+?\s*", text or "")
    if match is None:
        return 0
    number = float(match.group(1).replace(",", ""))
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(number * scale)


def _rfc822(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def parse_trends(document: bytes, geo: str) -> list[Trend]:
    """The topics of one geo's Trends RSS, with their traffic, date and news items."""
    _refuse_entities(document, f"Trends {geo}")
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise FeedParseError(f"Trends {geo}: not XML ({exc})") from None
    ns = {"ht": TRENDS_NS}
    trends = []
    for item in root.iter("item"):
        topic = " ".join((item.findtext("title") or "").split())
        published = _rfc822(item.findtext("pubDate"))
        if not topic or published is None:
            continue
        news = tuple(
            NewsItem(
                title=plain_text(node.findtext("ht:news_item_title", "", ns)),
                url=(node.findtext("ht:news_item_url", "", ns) or "").strip(),
                source=(node.findtext("ht:news_item_source", "", ns) or "").strip(),
            )
            for node in item.findall("ht:news_item", ns)
        )[:MAX_NEWS_ITEMS]
        approx = (item.findtext("ht:approx_traffic", "", ns) or "").strip()
        trends.append(Trend(topic, parse_traffic(approx), approx, published, (geo,), news))
    return trends
