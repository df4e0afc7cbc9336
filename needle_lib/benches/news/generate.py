"""``needle news generate``: live feeds and trends in, one cohort of fresh query rows out.

Pure orchestration: the source clients and the LLM projector are passed in, so tests run
it against loopback fakes and a scheduler can drive it. A feed or geo that fails counts as
a fetch error and contributes nothing; nothing else about the run changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TextIO, TypeAlias, TypedDict, TypeVar

from needle_lib.benches.generation import QueryRow, query_row
from needle_lib.benches.news.feedlist import Feed
from needle_lib.benches.news.parse import FeedParseError, Trend
from needle_lib.benches.news.project import (
    Projection,
    Projector,
    feed_messages,
    trend_messages,
)
from needle_lib.benches.news.select import (
    QUERY_SIMILARITY,
    Candidate,
    funnel_trends,
    pick_per_feed,
    query_key,
    similar,
)
from needle_lib.benches.news.sources import FeedClient, TrendsClient
from needle_lib.benches.rows import hour_of, seed_from_hour
from needle_lib.benches.sampling import stratified_sample
from needle_lib.net.sources import SourceError, SourceUnreachable
from needle_lib.progress import Progress

SOURCES = ("rss", "trending", "both")
QUERY_SOURCE = "fresh-queries"
US_STATES = (
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL",
    "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT",
    "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI",
    "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
)
#: ``--geos us-all``: the whole country, the 50 states and DC.
US_ALL = ("US", *(f"US-{state}" for state in US_STATES), "US-DC")

T = TypeVar("T")


@dataclass(frozen=True)
class NewsOptions:
    source: str = "both"
    geos: tuple[str, ...] = US_ALL
    min_candidates: int = 30
    max_trends: int = 50
    limit: int = 0
    seed: int | None = None


@dataclass
class NewsStats:
    """What happened to every item on its way to a row, printed as one line."""

    counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    unreachable: list[SourceUnreachable] = field(default_factory=list)

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)

    def line(self) -> str:
        order = ("feeds", "geos", "fetch_errors", "fetched", "fresh", "filled", "future",
                 "trends", "candidates", "evergreen", "off_format", "llm_errors",
                 "duplicates", "sampled_out", "rows")
        always = {"fetch_errors", "fresh", "evergreen", "llm_errors", "duplicates", "rows"}
        return "news generate: " + ", ".join(
            f"{name.replace('_', ' ')} {self[name]}" for name in order
            if name in self.counts or name in always
        )


async def _gathered(label: str, jobs: Sequence[Awaitable[T]], stream: TextIO | None) -> list[T]:
    """Await ``jobs`` concurrently with a progress bar; results in job order."""
    bar = Progress(label, len(jobs), stream=stream)

    async def tracked(job: Awaitable[T]) -> T:
        try:
            return await job
        finally:
            bar.advance()

    try:
        return list(await asyncio.gather(*(tracked(job) for job in jobs)))
    finally:
        bar.close()


async def _fetch(what: str, fetch: Callable[[], Awaitable[list[T]]], stats: NewsStats) -> list[T]:
    try:
        return await fetch()
    except (SourceError, FeedParseError, SourceUnreachable) as exc:
        stats.add("fetch_errors")
        stats.errors.append(f"{what}: {exc}")
        if isinstance(exc, SourceUnreachable):
            stats.unreachable.append(exc)
        return []


class RssProvenance(TypedDict):
    producer: str
    source_kind: str
    parent_site: str
    url: str
    title: str
    lastmod_or_pub_at: str
    fresh: bool


class NewsLink(TypedDict):
    title: str
    url: str
    source: str


class TrendProvenance(TypedDict):
    producer: str
    topic: str
    approx_traffic: str
    pub_date: str
    geos: list[str]
    geo_count: int
    news_items: list[NewsLink]


class NewsOrigin(TypedDict):
    """A news row's ``query_origin`` in NEEDLE's fresh-queries format."""

    bucket: str
    topical_domain: str
    subcategory: str
    provenance: RssProvenance | TrendProvenance


#: A row ``needle news generate`` writes (judged: no gold).
NewsRow: TypeAlias = QueryRow[NewsOrigin]


def rss_row(candidate: Candidate, text: str, hour: datetime) -> NewsRow:
    item = candidate.item
    domain = item.feed.topical_domain
    return _row(text, hour, domain, {
        "bucket": "rss",
        "topical_domain": domain,
        "subcategory": f"rss_{domain}",
        "provenance": {
            "producer": "rss_queries",
            "source_kind": item.feed.source_kind,
            "parent_site": item.feed.url,
            "url": item.url,
            "title": item.title,
            "lastmod_or_pub_at": item.published.isoformat(),
            "fresh": candidate.fresh,
        },
    })


def trend_row(trend: Trend, text: str, hour: datetime) -> NewsRow:
    return _row(text, hour, "other", {
        "bucket": "trending",
        "topical_domain": "other",
        "subcategory": "google_trends",
        "provenance": {
            "producer": "trends_queries",
            "topic": trend.topic,
            "approx_traffic": trend.approx_traffic,
            "pub_date": trend.published.isoformat(),
            "geos": list(trend.geos),
            "geo_count": len(trend.geos),
            "news_items": [{"title": n.title, "url": n.url, "source": n.source}
                           for n in trend.news_items],
        },
    })


def _row(text: str, hour: datetime, domain: str, origin: NewsOrigin) -> NewsRow:
    return query_row(text, hour, source=QUERY_SOURCE, origin=origin,
                     extra={"topical_domain": domain})


def _dedupe(rows: list[NewsRow], stats: NewsStats) -> list[NewsRow]:
    """Drop queries that say the same as an earlier one (fuzzy, filler words ignored)."""
    kept: list[NewsRow] = []
    keys: list[str] = []
    for row in rows:
        key = query_key(row["query_text"])
        if any(row["query_id"] == k["query_id"] for k in kept) or any(
            similar(key, other, QUERY_SIMILARITY) for other in keys
        ):
            stats.add("duplicates")
            continue
        kept.append(row)
        keys.append(key)
    return kept


def _count(projections: list[Projection], stats: NewsStats) -> None:
    for projection in projections:
        if projection.outcome == "evergreen":
            stats.add("evergreen")
        elif projection.outcome == "off_format":
            stats.add("off_format")
        elif projection.outcome == "llm_error":
            stats.add("llm_errors")
            stats.errors.append(f"LLM: {projection.detail}")


async def generate_news(
    *,
    feeds: Sequence[Feed],
    feed_client: FeedClient | None,
    trends_client: TrendsClient | None,
    projector: Projector,
    clock: Callable[[], datetime],
    options: NewsOptions = NewsOptions(),
    stream: TextIO | None = None,
) -> tuple[list[NewsRow], NewsStats]:
    """Rows of one cohort and the stats of how they were made.

    ``clock`` is read once every fetch is done: "now" for freshness is the moment the
    newest data arrived, and its UTC hour is the cohort's ``hour_ts``. One feed's host down
    costs that feed; every host unreachable raises ``SourceUnreachable``.
    """
    if options.source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {options.source!r}")
    stats = NewsStats()
    jobs: list[Awaitable[list[Any]]] = []
    use_rss = options.source in ("rss", "both") and feed_client is not None
    if feed_client is not None and use_rss:
        stats.add("feeds", len(feeds))
        jobs += [_fetch(feed.url, partial(feed_client.fetch, feed), stats) for feed in feeds]
    use_trends = options.source in ("trending", "both") and trends_client is not None
    if trends_client is not None and use_trends:
        stats.add("geos", len(options.geos))
        jobs += [_fetch(f"Trends {geo}", partial(trends_client.fetch, geo), stats)
                 for geo in options.geos]
    fetched = await _gathered("news: fetching", jobs, stream)
    if jobs and len(stats.unreachable) == len(jobs):
        raise stats.unreachable[0]  # not one host answered: offline, say so in one line
    now = clock()
    hour = hour_of(now)
    split = len(feeds) if use_rss else 0
    items = [item for batch in fetched[:split] for item in batch]
    trends = [trend for batch in fetched[split:] for trend in batch]

    candidates: list[Candidate] = []
    if use_rss:
        stats.add("fetched", len(items))
        pick = pick_per_feed(items, now=now, min_candidates=options.min_candidates)
        candidates = pick.candidates
        stats.add("fresh", pick.fresh)
        stats.add("filled", pick.filled)
        stats.add("future", pick.future)
    topics: list[Trend] = []
    if use_trends:
        funnel = funnel_trends(trends, now=now, max_trends=options.max_trends)
        topics = funnel.topics
        stats.add("future", funnel.future)
        stats.add("trends", len(topics))
    stats.add("candidates", len(candidates) + len(topics))

    today = now.date()
    projections = await _gathered(
        "news: projecting",
        [projector.project(feed_messages(c.item, today)) for c in candidates]
        + [projector.project(trend_messages(t, today)) for t in topics],
        stream,
    )
    _count(projections, stats)
    split = len(candidates)
    rows = [rss_row(c, p.query, hour)
            for c, p in zip(candidates, projections[:split], strict=True) if p.query]
    rows += [trend_row(t, p.query, hour)
             for t, p in zip(topics, projections[split:], strict=True) if p.query]
    rows = _dedupe(rows, stats)
    seed = options.seed if options.seed is not None else seed_from_hour(hour)
    picked = {row["query_id"] for row in stratified_sample(
        rows, lambda row: row["topical_domain"], options.limit, seed)}
    if len(picked) < len(rows):
        stats.add("sampled_out", len(rows) - len(picked))
    rows = [row for row in rows if row["query_id"] in picked]  # file order kept
    stats.add("rows", len(rows))
    return rows, stats
