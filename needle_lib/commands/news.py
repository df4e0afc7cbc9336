"""`needle news generate`: a cohort of fresh, time-sensitive queries from live RSS feeds and
Google Trends, projected into keyword queries by an LLM.

Run it shortly before `pytest evals -k news --queries fresh.jsonl`: freshness is judged as
of the cohort's hour (each row's hour_ts), and news goes stale within hours.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

from needle_lib.argtypes import positive_int
from needle_lib.benches.news.feedlist import DEFAULT_FEEDS, load_feeds
from needle_lib.benches.news.generate import SOURCES, US_ALL, NewsOptions, generate_news
from needle_lib.benches.news.project import DEFAULT_LLM_CONCURRENCY, Projector
from needle_lib.benches.news.sources import FeedClient, TrendsClient
from needle_lib.benches.rows import write_rows
from needle_lib.clock import utc_now
from needle_lib.commands.generation import add_bench_parser
from needle_lib.console import count_of
from needle_lib.llm import make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.net.sources import SourceUnreachable

_GEO = re.compile(r"^[A-Z]{2}(-[A-Z0-9]{1,3})?$")
_SHOWN_ERRORS = 10


def parse_geos(text: str) -> tuple[str, ...]:
    """``us-all`` (the 52 US geos) or comma-separated Trends geo codes (``US,US-CA,GB``)."""
    if text.strip().lower() == "us-all":
        return US_ALL
    geos = tuple(dict.fromkeys(part.strip().upper() for part in text.split(",") if part.strip()))
    bad = [geo for geo in geos if not _GEO.match(geo)]
    if bad or not geos:
        raise argparse.ArgumentTypeError(
            f"{', '.join(bad) or repr(text)}: not a geo code; use us-all or codes like US,US-CA"
        )
    return geos


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser, actions = add_bench_parser(
        subparsers, "news", help="fresh news queries from RSS feeds and Google Trends",
        description=__doc__, dest="news_action")
    gen = actions.add_parser("generate", help="write a cohort of fresh query rows (JSONL)")
    gen.add_argument("--source", choices=SOURCES, default="both",
                     help="rss, trending, or both in one cohort (default: both)")
    gen.add_argument("--feeds", type=Path, default=DEFAULT_FEEDS,
                     help="feed list TOML (default: fixtures/news-feeds.default.toml)")
    gen.add_argument("--geos", type=parse_geos, default=US_ALL, metavar="us-all|CODES",
                     help="Google Trends geos (default: us-all = US, 50 states, DC)")
    gen.add_argument("--min-candidates", type=_non_negative, default=30,
                     help="fill with the least-stale feed items up to this many (default 30)")
    gen.add_argument("--max-trends", type=_non_negative, default=50,
                     help="keep this many trending topics, by traffic (0 = all; default 50)")
    gen.add_argument("--limit", type=_non_negative, default=0,
                     help="sample this many rows, stratified by topical_domain (0 = all)")
    gen.add_argument("--seed", type=int, default=None,
                     help="sampling seed (default: derived from the UTC hour)")
    gen.add_argument("--llm-model", default=None,
                     help="projection model (default: $NEEDLE_LLM_MODEL or the judge default)")
    gen.add_argument("--llm-concurrency", type=positive_int, default=DEFAULT_LLM_CONCURRENCY,
                     help=f"projection requests in flight (default {DEFAULT_LLM_CONCURRENCY})")
    gen.add_argument("--out", required=True, help="output JSONL path (- = stdout)")
    parser.set_defaults(func=run)


async def _generate(args: argparse.Namespace):
    feeds = load_feeds(args.feeds) if args.source in ("rss", "both") else []
    client = make_async_chat_client(generation_model_config(args.llm_model))
    feed_client = FeedClient() if feeds else None
    trends_client = TrendsClient() if args.source in ("trending", "both") else None
    try:
        return await generate_news(
            feeds=feeds, feed_client=feed_client, trends_client=trends_client,
            projector=Projector(client, concurrency=args.llm_concurrency),
            clock=utc_now,
            options=NewsOptions(source=args.source, geos=args.geos,
                                min_candidates=args.min_candidates, max_trends=args.max_trends,
                                limit=args.limit, seed=args.seed),
        )
    finally:
        for source in (feed_client, trends_client):
            if source is not None:
                await source.aclose()
        await client.aclose()


def run(args: argparse.Namespace) -> int:
    try:
        rows, stats = asyncio.run(_generate(args))
    except SourceUnreachable as exc:
        print(f"needle news generate: {exc}", file=sys.stderr)
        return 1
    for error in stats.errors[:_SHOWN_ERRORS]:
        print(f"  {error}", file=sys.stderr)
    if len(stats.errors) > _SHOWN_ERRORS:
        print(f"  … and {len(stats.errors) - _SHOWN_ERRORS} more", file=sys.stderr)
    print(stats.line(), file=sys.stderr)
    if not rows:
        print("needle news generate: no queries survived; nothing written", file=sys.stderr)
        return 1
    written = write_rows(rows, args.out)
    if args.out != "-":
        print(f"wrote {count_of(written, 'row')} to {args.out}", file=sys.stderr)
    return 0
