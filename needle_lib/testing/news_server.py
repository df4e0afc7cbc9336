"""Loopback fakes for ``needle news generate``: feeds, Google Trends and the projection LLM.

One real HTTP server on 127.0.0.1 serves:

- feeds at ``/feeds/<name>`` in RSS 2.0, RSS 1.0 (RDF) or Atom 1.0, plus a broken document,
  an HTML page, an XML entity bomb and (for any unknown name) a 404;
- Google Trends' trending RSS at ``/trending/rss?geo=<GEO>`` (the ``ht:`` namespace, several
  ``ht:news_item`` per topic, as the live feed sends them);
- an OpenAI-compatible ``/v1/chat/completions`` that projects items into queries (asked for
  structured output, it answers ``{"query": …}`` as a grammar-constrained server would; the
  shapes asked are counted in ``formats``): the first
  four words of the title or topic, lowercased; ``NO_NEWS_EVENT`` for a title containing
  "evergreen"; a rambling sentence for "ramble"; a cut-off reply for "truncate".

Item dates are offsets from ``now()`` read at serve time, so a fixed clock gives fixed
documents and the real clock gives documents that are fresh whenever a test runs.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

from needle_lib.clock import utc_now
from needle_lib.testing.chat import completion, message_texts
from needle_lib.testing.loopback import LoopbackServer, Response
from needle_lib.testing.structured import asked_format

BOMB = (
    '<?xml version="1.0"?>\n<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa">'
    + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
    + ']>\n<rss version="2.0"><channel><title>bomb</title><item><title>&i;</title>'
    "<link>https://bomb.example/x</link><pubDate>Thu, 02 Jul 2026 14:00:00 GMT</pubDate>"
    "</item></channel></rss>"
)
BROKEN = '<?xml version="1.0"?><rss version="2.0"><channel><title>x</title><item><title>Half'
HTML_PAGE = "<!DOCTYPE html><html><body><h1>We moved our feed</h1></body></html>"
SPECIAL = {"broken": BROKEN, "bomb": BOMB, "html": HTML_PAGE}


@dataclass(frozen=True)
class FakeItem:
    title: str
    age: timedelta
    summary: str = ""
    url: str = ""


@dataclass(frozen=True)
class FakeFeed:
    kind: str  # "rss2" | "rss1" | "atom"
    items: tuple[FakeItem, ...]


@dataclass(frozen=True)
class FakeTrend:
    topic: str
    traffic: str
    age: timedelta
    news: tuple[tuple[str, str, str], ...] = ()  # (title, url, source)


@dataclass
class NewsSources:
    feeds: dict[str, FakeFeed] = field(default_factory=dict)
    trends: dict[str, tuple[FakeTrend, ...]] = field(default_factory=dict)


def _url(item: FakeItem) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", item.title.lower()).strip("-")
    return item.url or f"https://news.example/{slug}"


def rss2(items: tuple[FakeItem, ...], now: datetime) -> str:
    body = "".join(
        f"<item><title>{escape(i.title)}</title><link>{_url(i)}</link>"
        f"<description>{escape(i.summary)}</description>"
        f"<pubDate>{format_datetime(now - i.age, usegmt=True)}</pubDate></item>"
        for i in items
    )
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
            f"<title>Fake news</title><link>https://news.example/</link>{body}</channel></rss>")


def rss1(items: tuple[FakeItem, ...], now: datetime) -> str:
    body = "".join(
        f'<item rdf:about="{_url(i)}"><title>{escape(i.title)}</title><link>{_url(i)}</link>'
        f"<description>{escape(i.summary)}</description>"
        f"<dc:date>{(now - i.age).strftime('%Y-%m-%dT%H:%M:%SZ')}</dc:date></item>"
        for i in items
    )
    return ('<?xml version="1.0"?>\n<rdf:RDF '
            'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            '<channel rdf:about="https://papers.example/"><title>Papers</title>'
            f"<link>https://papers.example/</link><description>x</description></channel>"
            f"{body}</rdf:RDF>")


def atom(items: tuple[FakeItem, ...], now: datetime) -> str:
    # Atom times in a +02:00 offset: the parser must convert them to UTC
    body = "".join(
        f'<entry><title type="html">{escape(i.title)}</title>'
        f'<link rel="alternate" href="{_url(i)}"/><id>{_url(i)}</id>'
        f"<updated>{(now - i.age).astimezone(_CEST).isoformat()}</updated>"
        f'<summary type="html">{escape("<p>" + i.summary + "</p>")}</summary></entry>'
        for i in items
    )
    return ('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>Fake blog</title><id>urn:fake</id><updated>{now.isoformat()}</updated>"
            f"{body}</feed>")


_CEST = timezone(timedelta(hours=2))
_FORMATS = {"rss2": rss2, "rss1": rss1, "atom": atom}


def trends_rss(geo: str, trends: tuple[FakeTrend, ...], now: datetime) -> str:
    items = "".join(
        f"<item><title>{escape(t.topic)}</title><ht:approx_traffic>{t.traffic}"
        f"</ht:approx_traffic><description/><link>https://trends.google.com/trending/rss?geo="
        f"{geo}</link><pubDate>{format_datetime(now - t.age)}</pubDate>"
        + "".join(
            f"<ht:news_item><ht:news_item_title>{escape(title)}</ht:news_item_title>"
            f"<ht:news_item_snippet/><ht:news_item_url>{escape(url)}</ht:news_item_url>"
            f"<ht:news_item_source>{escape(source)}</ht:news_item_source></ht:news_item>"
            for title, url, source in t.news
        )
        + "</item>"
        for t in trends
    )
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<rss xmlns:atom="http://www.w3.org/2005/Atom" '
            'xmlns:ht="https://trends.google.com/trending/rss" version="2.0"><channel>'
            f"<title>Daily Search Trends</title><description>Recent searches</description>"
            f"<link>https://trends.google.com/trending/rss?geo={geo}</link>{items}"
            "</channel></rss>")


def project(messages: list[str]) -> tuple[str, str]:
    """The fake projection of the messages' texts: (content, finish_reason)."""
    user = messages[-1] if messages else ""
    match = re.search(r"^(?:Title|Trending topic): (.*)$", user, re.M)
    title = match.group(1) if match else ""
    lowered = title.lower()
    if "truncate" in lowered:
        return "lakers trade", "length"
    if "evergreen" in lowered:
        return "NO_NEWS_EVENT", "stop"
    if "ramble" in lowered:
        return "this item is about many things that happened somewhere at some time", "stop"
    words = re.sub(r"[^\w\s]", " ", lowered).split()[:4]
    return f'"{" ".join(words)}"', "stop"


_MIN, _HOUR = timedelta(minutes=1), timedelta(hours=1)

#: The small world ``needle serve sources news`` serves: fresh and stale items in the three
#: feed formats, and two trending topics (one the LLM refuses as evergreen).
DEMO_SOURCES = NewsSources(
    feeds={
        "harbor-daily": FakeFeed("rss2", (
            FakeItem("Ferry strike halts harbor crossings", 15 * _MIN),
            FakeItem("Council reviews pier budget", 20 * _HOUR))),
        "orbit-weekly": FakeFeed("atom", (
            FakeItem("Lunar lander sends first panorama", 40 * _MIN),)),
        "preprints": FakeFeed("rss1", (
            FakeItem("Sparse retrieval for rare entity names", 30 * _HOUR),)),
        "ballpark": FakeFeed("rss2", (FakeItem("Storm delays championship final", 2 * _HOUR),)),
    },
    trends={"US": (
        FakeTrend("tidal power auction", "100K+", _HOUR,
                  (("Tidal power auction draws record bids", "https://energy.example/a",
                    "Energy Wire"),)),
        FakeTrend("evergreen pancake recipe", "20K+", _HOUR),
    )},
)
#: (source_kind, topical_domain) of each demo feed, for its feed list.
DEMO_FEED_KINDS = {"harbor-daily": ("rss_news", "local_civic"),
                   "orbit-weekly": ("rss_news", "science"),
                   "preprints": ("rss_paper", "science"),
                   "ballpark": ("rss_news", "sports")}


class FakeNewsServer(LoopbackServer):
    def __init__(self, sources: NewsSources, *,
                 now: Callable[[], datetime] = utc_now) -> None:
        self.sources = sources
        self.now = now
        self.requests: Counter[str] = Counter()
        self.user_agents: Counter[str] = Counter()
        #: the ``response_format`` shape of each projection request (``text``: none)
        self.formats: Counter[str] = Counter()
        self._lock = threading.Lock()
        super().__init__()

    def feed_url(self, name: str) -> str:
        return f"{self.url}/feeds/{name}"

    def feed_list(self, kinds: dict[str, tuple[str, str]]) -> str:
        """A ``--feeds`` TOML of this server's feeds: name → (source_kind, topical_domain)."""
        return "".join(f'[[source]]\nurl = "{self.feed_url(name)}"\nsource_kind = "{kind}"\n'
                       f'topical_domain = "{domain}"\n\n'
                       for name, (kind, domain) in kinds.items())

    def env(self) -> dict[str, str]:
        """Routes Trends and the generation LLM here."""
        return {"NEEDLE_TRENDS_BASE_URL": self.url, "NEEDLE_LLM_BASE_URL": self.url,
                "NEEDLE_LLM_MODEL": "fake-projector", "OPENROUTER_API_KEY": "fake-llm-key"}

    def _count(self, what: str, agent: str) -> None:
        with self._lock:
            self.requests[what] += 1
            self.user_agents[agent] += 1

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        parsed = urlparse(path)
        self._count(parsed.path.split("/")[1], headers.get("User-Agent", ""))
        if parsed.path.endswith("/chat/completions"):
            request = json.loads(body)
            content, finish = project(message_texts(request))
            shape = asked_format(request).shape
            with self._lock:
                self.formats[shape] += 1
            if shape != "text":
                content = json.dumps({"query": content})
            payload = completion(content, model="fake-projector", finish_reason=finish,
                                 id="fake")
            return 200, "application/json", json.dumps(payload).encode()
        now = self.now()
        if parsed.path == "/trending/rss":
            geo = parse_qs(parsed.query).get("geo", [""])[0]
            if geo not in self.sources.trends:
                return 404, "text/plain", b"unknown geo"
            document = trends_rss(geo, self.sources.trends[geo], now)
            return 200, "application/rss+xml; charset=utf-8", document.encode()
        name = parsed.path.removeprefix("/feeds/")
        if name in SPECIAL:
            return 200, "application/xml", SPECIAL[name].encode()
        feed = self.sources.feeds.get(name)
        if feed is None:
            return 404, "text/plain", b"not found"
        document = _FORMATS[feed.kind](feed.items, now)
        return 200, "application/xml; charset=utf-8", document.encode()
