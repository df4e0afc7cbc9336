"""Which items become candidates: the freshness rules for feeds, the funnel for trends.

Feeds. A news query is only a fair test while its event is current, so each feed offers
one item, its newest, and that item is fresh when at most 1 hour old (168 hours for paper
feeds, which publish daily batches). Quiet hours leave few fresh items; then the newest
items that are least stale fill the cohort up to ``min_candidates``, never older than 6
hours (168 for papers). Items dated more than 5 minutes into the future are dropped (a
wrong clock or time zone at the publisher); a smaller skew counts as age zero.

Trends. The same topic trends in many states at once: identical topics are merged (their
geos united), near-identical ones (rapidfuzz token-set ratio ≥ 90 after normalisation) fold
into the bigger one, non-ASCII topics and topics older than 24 hours are dropped, and the
biggest by traffic are kept up to ``max_trends``. Topics dated more than 5 minutes into the
future are dropped before merging, as feed items are: a wrong clock says nothing about when
the topic trended, and merged into a twin it would make the twin look newer than it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from rapidfuzz import fuzz

from needle_lib.benches.news.parse import FeedItem, Trend
from needle_lib.benches.rows import canonical_text

FRESH = timedelta(hours=1)
FRESH_PAPER = timedelta(hours=168)
STALE_LIMIT = timedelta(hours=6)
FUTURE_SKEW = timedelta(minutes=5)
TREND_MAX_AGE = timedelta(hours=24)
TOPIC_SIMILARITY = 90
QUERY_SIMILARITY = 85
PAPER_KIND = "rss_paper"


@dataclass(frozen=True)
class Candidate:
    item: FeedItem
    age: timedelta
    fresh: bool


@dataclass
class FeedPick:
    candidates: list[Candidate]
    future: int = 0
    too_old: int = 0

    @property
    def fresh(self) -> int:
        return sum(c.fresh for c in self.candidates)

    @property
    def filled(self) -> int:
        return len(self.candidates) - self.fresh


def _windows(kind: str) -> tuple[timedelta, timedelta]:
    """(fresh window, oldest a fill item may be) for a feed kind."""
    return (FRESH_PAPER, FRESH_PAPER) if kind == PAPER_KIND else (FRESH, STALE_LIMIT)


def pick_per_feed(items: Iterable[FeedItem], *, now: datetime, min_candidates: int) -> FeedPick:
    """The newest item of each feed; fresh ones first, then the least stale to fill up."""
    newest: dict[str, tuple[FeedItem, timedelta]] = {}
    pick = FeedPick([])
    for item in items:
        if item.published > now + FUTURE_SKEW:
            pick.future += 1
            continue
        age = max(now - item.published, timedelta(0))
        current = newest.get(item.feed.url)
        if current is None or age < current[1]:
            newest[item.feed.url] = (item, age)
    fresh, stale = [], []
    for item, age in newest.values():
        fresh_window, oldest = _windows(item.feed.source_kind)
        if age <= fresh_window:
            fresh.append(Candidate(item, age, True))
        elif age <= oldest:
            stale.append(Candidate(item, age, False))
        else:
            pick.too_old += 1
    stale.sort(key=lambda c: (c.age, c.item.feed.url))
    pick.candidates = fresh + stale[: max(0, min_candidates - len(fresh))]
    return pick


# --- trends ----------------------------------------------------------------------------------

_TOPIC_STOPWORDS = {"v", "vs", "and"}
_QUERY_STOPWORDS = _TOPIC_STOPWORDS | {
    "match", "result", "results", "score", "scores", "live", "today",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
}
_YEAR = re.compile(r"^(19|20)\d\d$")


def _tokens(text: str) -> list[str]:
    """ASCII-folded, lowercased alphanumeric tokens."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", " ", ascii_text.lower()).split()


def topic_key(text: str) -> str:
    """Normalised for topic dedupe: tokens minus v/vs/and, sorted."""
    return " ".join(sorted(t for t in _tokens(text) if t not in _TOPIC_STOPWORDS))


def query_key(text: str) -> str:
    """Normalised for query dedupe: also drops filler (live, score, today), months, years,
    which make two phrasings of one event look different."""
    return " ".join(sorted(t for t in _tokens(text)
                           if t not in _QUERY_STOPWORDS and not _YEAR.match(t)))


def similar(a: str, b: str, threshold: int) -> bool:
    return bool(a) and bool(b) and fuzz.token_set_ratio(a, b) >= threshold


def _union(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _merge(kept: Trend, other: Trend) -> Trend:
    news = {n.url: n for n in (*kept.news_items, *other.news_items)}
    return replace(
        kept,
        traffic=max(kept.traffic, other.traffic),
        approx_traffic=kept.approx_traffic if kept.traffic >= other.traffic
        else other.approx_traffic,
        published=max(kept.published, other.published),
        geos=_union(kept.geos, other.geos),
        news_items=tuple(news.values())[:5],
    )


@dataclass
class TrendFunnel:
    topics: list[Trend]
    merged: int = 0
    near_duplicates: int = 0
    non_ascii: int = 0
    too_old: int = 0
    future: int = 0
    over_cap: int = 0


def funnel_trends(trends: Iterable[Trend], *, now: datetime, max_trends: int) -> TrendFunnel:
    """Drop future-dated topics, merge across geos, fold near-duplicates, keep recent ASCII
    topics, cap by traffic."""
    by_topic: dict[str, Trend] = {}
    funnel = TrendFunnel([])
    for trend in trends:
        if trend.published > now + FUTURE_SKEW:
            funnel.future += 1
            continue
        key = canonical_text(trend.topic)
        if key in by_topic:
            by_topic[key] = _merge(by_topic[key], trend)
            funnel.merged += 1
        else:
            by_topic[key] = trend
    ranked = sorted(by_topic.values(), key=lambda t: (-t.traffic, canonical_text(t.topic)))
    kept: list[Trend] = []
    for trend in ranked:
        twin = next((i for i, k in enumerate(kept)
                     if similar(topic_key(k.topic), topic_key(trend.topic), TOPIC_SIMILARITY)),
                    None)
        if twin is not None:
            kept[twin] = _merge(kept[twin], trend)
            funnel.near_duplicates += 1
        elif not trend.topic.isascii():
            funnel.non_ascii += 1
        elif now - trend.published > TREND_MAX_AGE:
            funnel.too_old += 1
        else:
            kept.append(trend)
    if max_trends > 0 and len(kept) > max_trends:
        funnel.over_cap = len(kept) - max_trends
        kept = kept[:max_trends]
    funnel.topics = kept
    return funnel
