"""HTTP clients of the news sources: the RSS/Atom feeds and Google Trends' trending RSS.

Both are keyless public feeds; each request says who is asking (a descriptive User-Agent,
with ``NEEDLE_CONTACT`` when set), runs under the shared retry policy and a bound on
requests in flight. Feed URLs come from the feed list, so the feed client has no base URL;
Trends' is overridable with ``NEEDLE_TRENDS_BASE_URL``.
"""

from __future__ import annotations

from typing import ClassVar

from needle_lib import __version__
from needle_lib.benches.news.feedlist import Feed
from needle_lib.benches.news.parse import FeedItem, Trend, parse_feed, parse_trends
from needle_lib.net.sources import SourceClient

_FEED_TYPES = ("application/rss+xml, application/atom+xml, application/rdf+xml, "
               "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5")


class FeedClient(SourceClient):
    """Fetches feeds by their own URLs: at most 15 at once, 20 s each."""

    source: ClassVar[str] = "feeds"
    default_base_url: ClassVar[str] = ""
    max_in_flight: ClassVar[int] = 15
    timeout: ClassVar[float] = 20.0
    override_hint: ClassVar[str | None] = ("pass --feeds FILE listing reachable feeds "
                                           "(needle serve sources news serves some)")

    def headers(self) -> dict[str, str]:
        return {"User-Agent": f"{self.user_agent} news-feed-reader", "Accept": _FEED_TYPES}

    async def fetch(self, feed: Feed) -> list[FeedItem]:
        """The dated items of ``feed``; ``SourceError`` or ``FeedParseError`` if unusable."""
        response = await self.get(feed.url)
        return parse_feed(response.content, feed)


class TrendsClient(SourceClient):
    """Google Trends' keyless trending RSS, one geo per request (at most 10 at once).

    The endpoint serves browsers; a browser-style User-Agent that still names the tool is
    what it answers reliably.
    """

    source: ClassVar[str] = "trends"
    default_base_url: ClassVar[str] = "https://trends.google.com"
    max_in_flight: ClassVar[int] = 10
    timeout: ClassVar[float] = 20.0

    def headers(self) -> dict[str, str]:
        return {"User-Agent": f"Mozilla/5.0 (compatible; needle-evals/{__version__})",
                "Accept": _FEED_TYPES}

    async def fetch(self, geo: str) -> list[Trend]:
        response = await self.get("/trending/rss", params={"geo": geo})
        return parse_trends(response.content, geo)
