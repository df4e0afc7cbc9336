"""`needle news generate` offline: feed and Trends parsing, the freshness and fill rules at
fixed clocks, the trends funnel, projection replies, dedupe, sampling, and whole runs against
a loopback server (feeds, Trends, LLM), from the library and from the command line."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from evalrun import run_evals

from needle_lib.benches.news.feedlist import DEFAULT_FEEDS, Feed, load_feeds
from needle_lib.benches.news.generate import US_ALL, NewsOptions, generate_news
from needle_lib.benches.news.parse import (
    FeedItem,
    FeedParseError,
    NewsItem,
    Trend,
    parse_feed,
    parse_traffic,
    parse_trends,
)
from needle_lib.benches.news.project import Projector, read_reply, reply_line
from needle_lib.benches.news.select import funnel_trends, pick_per_feed, query_key, similar
from needle_lib.benches.news.sources import FeedClient, TrendsClient
from needle_lib.benches.rows import query_id, write_rows
from needle_lib.cli import main
from needle_lib.llm import AsyncChatClient, RetryPolicy
from needle_lib.llm.roles import generation_model_config
from needle_lib.testing.loopback import closed_port_url
from needle_lib.testing.news_server import (
    BOMB,
    BROKEN,
    HTML_PAGE,
    FakeFeed,
    FakeItem,
    FakeNewsServer,
    FakeTrend,
    NewsSources,
    atom,
    rss1,
    rss2,
    trends_rss,
)
from needle_lib.testing.search_server import FakeSearchServer
from needle_lib.tomlconf import ConfigError

NOW = datetime(2026, 7, 2, 14, 20, tzinfo=UTC)
NEWS = Feed("https://news.example/rss", "rss_news", "sports")
PAPERS = Feed("https://papers.example/rss", "rss_paper", "science")
MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)


async def no_sleep(_: float) -> None:
    return None


# --- feed list ---------------------------------------------------------------------------------


def test_the_default_feed_list_is_the_124_curated_feeds() -> None:
    feeds = load_feeds(DEFAULT_FEEDS)
    assert len(feeds) == 124
    assert sum(f.source_kind == "rss_paper" for f in feeds) == 3
    assert sum(f.topical_domain == "local_civic" for f in feeds) == 30


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('url = "https://a.example/rss"\nsource_kind = "rss_tv"\ntopical_domain = "sports"',
         r"\[source #2\] source_kind 'rss_tv' is not one of"),
        ('url = "https://a.example/rss"\nsource_kind = "rss_news"\ntopical_domain = "sprots"',
         r"\[source #2\] topical_domain 'sprots'"),
        ('url = "https://a.example/rss"\nsource_kind = "rss_news"',
         r"\[source #2\] missing required key 'topical_domain'"),
        ('url = "https://news.example/rss"\nsource_kind = "rss_news"\ntopical_domain = "sports"',
         r"\[source #2\] url .* is listed twice"),
    ],
)
def test_a_bad_feed_entry_is_named(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "feeds.toml"
    path.write_text('[[source]]\nurl = "https://news.example/rss"\nsource_kind = "rss_news"\n'
                    f'topical_domain = "sports"\n\n[[source]]\n{entry}\n')
    with pytest.raises(ConfigError, match=rf"feeds\.toml: {message}"):
        load_feeds(path)


# --- parsing -----------------------------------------------------------------------------------

ITEMS = (FakeItem("Lakers <b>trade</b> & deal", 10 * MIN, "Big <i>trade</i> news"),
         FakeItem("Older story", 3 * HOUR))


@pytest.mark.parametrize("render", [rss2, rss1, atom], ids=["rss2", "rss1", "atom"])
def test_every_feed_format_gives_plain_text_items_in_utc(render) -> None:
    items = parse_feed(render(ITEMS, NOW).encode(), NEWS)
    assert [i.title for i in items] == ["Lakers trade & deal", "Older story"]
    assert items[0].published == NOW - 10 * MIN and items[0].published.tzinfo == UTC
    assert items[0].url == "https://news.example/lakers-b-trade-b-deal"
    assert "trade" in items[0].summary and "<" not in items[0].summary
    assert items[0].feed == NEWS


@pytest.mark.parametrize("document", [BROKEN, HTML_PAGE], ids=["broken-xml", "html-page"])
def test_a_document_that_is_not_a_feed_is_an_error_naming_it(document: str) -> None:
    with pytest.raises(FeedParseError, match=r"news\.example/rss: unusable feed"):
        parse_feed(document.encode(), NEWS)


def test_an_entity_bomb_is_refused_before_parsing() -> None:
    """10**8 characters if expanded: refused as a feed that declares entities."""
    with pytest.raises(FeedParseError, match="declares XML entities"):
        parse_feed(BOMB.encode(), NEWS)
    with pytest.raises(FeedParseError, match="Trends US: the document declares XML entities"):
        parse_trends(BOMB.encode(), "US")


def test_trends_topics_keep_every_news_item() -> None:
    trend = FakeTrend("Lakers vs Celtics", "50K+", 2 * HOUR, (
        ("Lakers beat Celtics", "https://espn.example/a", "ESPN"),
        ("Celtics fall in LA", "https://cbs.example/b", "CBS"),
    ))
    (parsed,) = parse_trends(trends_rss("US-CA", (trend,), NOW).encode(), "US-CA")
    assert parsed == Trend("Lakers vs Celtics", 50_000, "50K+", NOW - 2 * HOUR, ("US-CA",), (
        NewsItem("Lakers beat Celtics", "https://espn.example/a", "ESPN"),
        NewsItem("Celtics fall in LA", "https://cbs.example/b", "CBS"),
    ))


@pytest.mark.parametrize(("text", "value"),
                         [("2,000+", 2000), ("50K+", 50_000), ("1M+", 1_000_000), ("", 0)])
def test_traffic(text: str, value: int) -> None:
    assert parse_traffic(text) == value


# --- freshness and fill ----------------------------------------------------------------------


def _item(feed: Feed, age: timedelta, title: str = "t") -> FeedItem:
    return FeedItem(feed, title, "", f"{feed.url}/{title}", NOW - age)


def _feed(n: int, kind: str = "rss_news") -> Feed:
    return Feed(f"https://f{n}.example/rss", kind, "tech")


def test_only_the_newest_item_of_a_feed_counts_and_fresh_means_one_hour() -> None:
    pick = pick_per_feed([_item(NEWS, 50 * MIN, "old"), _item(NEWS, 20 * MIN, "new"),
                          _item(_feed(1), 61 * MIN)], now=NOW, min_candidates=0)
    assert [(c.item.title, c.fresh) for c in pick.candidates] == [("new", True)]


def test_paper_feeds_stay_fresh_for_a_week() -> None:
    pick = pick_per_feed([_item(PAPERS, 160 * HOUR), _item(_feed(1, "rss_paper"), 170 * HOUR)],
                         now=NOW, min_candidates=0)
    assert [(c.item.feed, c.fresh) for c in pick.candidates] == [(PAPERS, True)]
    assert pick.too_old == 1


def test_future_items_are_dropped_and_small_skew_is_age_zero() -> None:
    pick = pick_per_feed([_item(_feed(1), -10 * MIN), _item(_feed(2), -3 * MIN)],
                         now=NOW, min_candidates=0)
    assert pick.future == 1
    assert [(c.item.feed.url, c.age, c.fresh) for c in pick.candidates] == [
        (_feed(2).url, timedelta(0), True)]


def test_too_few_fresh_items_are_filled_with_the_least_stale_never_beyond_six_hours() -> None:
    ages = [30 * MIN, 5 * HOUR, 2 * HOUR, 3 * HOUR, 7 * HOUR]
    items = [_item(_feed(n), age) for n, age in enumerate(ages)]
    pick = pick_per_feed(items, now=NOW, min_candidates=3)
    assert [c.age for c in pick.candidates] == [30 * MIN, 2 * HOUR, 3 * HOUR]
    assert (pick.fresh, pick.filled) == (1, 2)
    everything = pick_per_feed(items, now=NOW, min_candidates=30)
    assert [c.age for c in everything.candidates][-1] == 5 * HOUR and everything.too_old == 1


# --- trends funnel -------------------------------------------------------------------------


def _trend(topic: str, traffic: int, geo: str = "US", age: timedelta = HOUR) -> Trend:
    return Trend(topic, traffic, f"{traffic}+", NOW - age, (geo,),
                 (NewsItem(f"{topic} news", f"https://n.example/{geo}/{topic}", "N"),))


def test_trends_merge_fold_filter_and_cap() -> None:
    funnel = funnel_trends([
        _trend("Lakers vs Celtics", 5000, "US-CA"),
        _trend("lakers vs celtics", 2000, "US-MA"),   # identical: geos united
        _trend("Celtics - Lakers", 1000, "US-NY"),     # near-identical: folded into the bigger
        _trend("Café Tacvba", 9000),                   # not ASCII
        _trend("old storm", 8000, age=25 * HOUR),      # older than a day
        _trend("fed rate decision", 3000),
        _trend("mars rover landing", 100),
    ], now=NOW, max_trends=2)
    assert [t.topic for t in funnel.topics] == ["Lakers vs Celtics", "fed rate decision"]
    lakers = funnel.topics[0]
    assert lakers.geos == ("US-CA", "US-MA", "US-NY") and len(lakers.news_items) == 3
    assert (funnel.merged, funnel.near_duplicates, funnel.non_ascii, funnel.too_old,
            funnel.over_cap) == (1, 1, 1, 1, 1)


def test_future_dated_trends_are_dropped_like_future_feed_items() -> None:
    """Beyond the 5-minute clock skew a topic is dropped (and counted), never merged."""
    funnel = funnel_trends([
        _trend("solar eclipse", 9000, age=-2 * HOUR),            # two hours ahead
        _trend("Solar Eclipse", 100, "US-TX", age=HOUR),         # its twin, dated sanely
        _trend("rate decision", 500, age=-timedelta(minutes=4)),  # within the skew
    ], now=NOW, max_trends=0)
    assert [(t.topic, t.published) for t in funnel.topics] == [
        ("rate decision", NOW + timedelta(minutes=4)), ("Solar Eclipse", NOW - HOUR)]
    assert funnel.future == 1


def test_query_dedupe_ignores_filler_words_months_and_years() -> None:
    assert similar(query_key("Lakers Celtics score July 2026"), query_key("lakers vs celtics"),
                   85)
    assert not similar(query_key("lakers celtics trade"), query_key("fed rate decision"), 85)


# --- projection replies ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "query", "outcome"),
    [
        ('"Lakers Celtics trade deadline"\n', "Lakers Celtics trade deadline", "query"),
        ("  fed holds rates june.  ", "fed holds rates june", "query"),
        ("NO_NEWS_EVENT", None, "evergreen"),
        ("no_news_event.", None, "evergreen"),
        ("", None, "off_format"),
        ("who won the game?", None, "off_format"),
        ("lakers", None, "off_format"),
        ("one two three four five six seven", None, "off_format"),
    ],
)
def test_reply_reading(reply: str, query: str | None, outcome: str) -> None:
    projection = read_reply(reply)
    assert (projection.query, projection.outcome) == (query, outcome)
    # the same line asked for as structured output reads the same
    structured = read_reply(reply_line(json.dumps({"query": reply})))
    assert (structured.query, structured.outcome) == (query, outcome)


@pytest.mark.parametrize("content", ['{"answer": "x"}', '["fed holds rates"]', "{not json",
                                     '{"query": 3}'])
def test_a_reply_outside_the_schema_is_read_as_text(content: str) -> None:
    """A server that took ``response_format`` and ignored it: the text rules judge it."""
    assert reply_line(content) == content


# --- whole runs --------------------------------------------------------------------------------

SOURCES = NewsSources(
    feeds={
        "espn": FakeFeed("rss2", (FakeItem("Lakers trade for star guard", 20 * MIN),
                                  FakeItem("Yesterday's game recap", 20 * HOUR))),
        "arxiv": FakeFeed("rss1", (FakeItem("Dense retrieval for rare entities", 30 * HOUR),)),
        "blog": FakeFeed("atom", (FakeItem("Evergreen guide to sourdough", 5 * MIN),)),
        "metro": FakeFeed("rss2", (FakeItem("City council passes transit budget", 2 * HOUR),)),
        "stale": FakeFeed("rss2", (FakeItem("Storm closes schools", 9 * HOUR),)),
        "ramble": FakeFeed("rss2", (FakeItem("Ramble about everything", 10 * MIN),)),
        "copy": FakeFeed("rss2", (FakeItem("Lakers trade for star guard today", 15 * MIN),)),
    },
    trends={
        "US": (FakeTrend("fed rate decision", "200K+", 2 * HOUR,
                         (("Fed holds rates steady", "https://fed.example/a", "Reuters"),)),
               FakeTrend("lakers trade", "50K+", HOUR)),
        "US-CA": (FakeTrend("Fed Rate Decision", "10K+", HOUR),
                  FakeTrend("evergreen recipe", "5K+", HOUR)),
    },
)
FEED_KINDS = {"espn": ("rss_news", "sports"), "arxiv": ("rss_paper", "science"),
              "blog": ("rss_blog", "tech"), "metro": ("rss_news", "local_civic"),
              "stale": ("rss_news", "local_civic"), "ramble": ("rss_social", "tech"),
              "copy": ("rss_news", "sports")}
BAD_FEEDS = ("broken", "bomb", "html", "gone")  # the last one answers 404


def _feeds(server: FakeNewsServer) -> list[Feed]:
    good = [Feed(server.feed_url(n), *FEED_KINDS[n]) for n in SOURCES.feeds]
    return good + [Feed(server.feed_url(n), "rss_news", "other") for n in BAD_FEEDS]


async def _run(server: FakeNewsServer, extra_feeds: tuple[Feed, ...] = (),
               **options) -> tuple[list[dict], object]:
    env = server.env()
    projector = Projector(AsyncChatClient(generation_model_config(environ=env),
                                          retry=RetryPolicy(attempts=1)))
    feeds, trends = FeedClient(env=env, sleep=no_sleep), TrendsClient(env=env, sleep=no_sleep)
    try:
        return await generate_news(
            feeds=[*_feeds(server), *extra_feeds], feed_client=feeds, trends_client=trends,
            projector=projector,
            clock=lambda: NOW, stream=io.StringIO(),
            options=NewsOptions(**{"geos": ("US", "US-CA", "US-TX"), "min_candidates": 6,
                                   **options}),
        )
    finally:
        await feeds.aclose()
        await trends.aclose()
        await projector.client.aclose()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "fake-llm-key")
    with FakeNewsServer(SOURCES, now=lambda: NOW) as running:
        yield running


async def test_both_sources_make_one_cohort(server: FakeNewsServer) -> None:
    rows, stats = await _run(server)
    texts = [row["query_text"] for row in rows]
    # espn (fresh), ramble (fresh, off format), blog (fresh, evergreen), copy (fresh,
    # a near-copy of espn), then the fill: metro (2 h); the paper is fresh for a week;
    # stale (9 h) is never used; trends: fed (merged across geos), lakers trade (a twin of
    # the espn query), evergreen recipe (refused)
    assert texts == ["lakers trade for star", "dense retrieval for rare",
                     "city council passes transit", "fed rate decision"]
    # every projection asked for the schema (the fake, like OpenAI's API, takes it)
    assert set(server.formats) == {"json_schema"}
    assert {row["topical_domain"] for row in rows} == {"sports", "science", "local_civic",
                                                        "other"}
    espn, fed = rows[0], rows[-1]
    assert espn["query_id"] == query_id("lakers trade for star", NOW)
    assert espn["query_id"].endswith("_2026-07-02T14") and len(espn["query_hash"]) == 16
    assert espn["hour_ts"] == espn["query_produced_at"] == "2026-07-02T14:00:00+00:00"
    assert espn["query_source"] == "fresh-queries"
    assert espn["query_origin"] == {
        "bucket": "rss", "topical_domain": "sports", "subcategory": "rss_sports",
        "provenance": {"producer": "rss_queries", "source_kind": "rss_news",
                       "parent_site": server.feed_url("espn"),
                       "url": "https://news.example/lakers-trade-for-star-guard",
                       "title": "Lakers trade for star guard",
                       "lastmod_or_pub_at": "2026-07-02T14:00:00+00:00", "fresh": True},
    }
    provenance = fed["query_origin"]["provenance"]
    assert fed["query_origin"]["bucket"] == "trending" and fed["topical_domain"] == "other"
    assert provenance["geos"] == ["US", "US-CA"] and provenance["geo_count"] == 2
    assert provenance["approx_traffic"] == "200K+"
    assert provenance["news_items"] == [{"title": "Fed holds rates steady",
                                         "url": "https://fed.example/a", "source": "Reuters"}]
    assert {k: stats[k] for k in ("feeds", "geos", "fetch_errors", "fresh", "filled",
                                  "evergreen", "off_format", "duplicates", "rows")} == {
        "feeds": 11, "geos": 3, "fetch_errors": 5, "fresh": 5, "filled": 1, "evergreen": 2,
        "off_format": 1, "duplicates": 2, "rows": 4}
    line = stats.line()
    for part in ("fetch errors 5", "fresh 5", "evergreen 2", "llm errors 0", "duplicates 2"):
        assert part in line
    assert any("gone" in error and "HTTP 404" in error for error in stats.errors)
    assert any("Trends US-TX" in error for error in stats.errors)


async def test_user_agents_are_descriptive(server: FakeNewsServer) -> None:
    await _run(server, source="both")
    agents = list(server.user_agents)
    assert any(a.startswith("needle-evals/") and "news-feed-reader" in a for a in agents)
    assert any(a.startswith("Mozilla/5.0 (compatible; needle-evals/") for a in agents)


async def test_one_source_at_a_time(server: FakeNewsServer) -> None:
    rss, _ = await _run(server, source="rss")
    trending, stats = await _run(server, source="trending")
    assert {r["query_origin"]["bucket"] for r in rss} == {"rss"}
    assert [r["query_text"] for r in trending] == ["fed rate decision", "lakers trade"]
    assert stats["feeds"] == 0 and server.requests["feeds"] == len(_feeds(server))


async def test_llm_failures_are_counted_not_fatal(server: FakeNewsServer) -> None:
    server.sources.feeds["truncate"] = FakeFeed("rss2", (FakeItem("Truncate this", MIN),))
    FEED_KINDS["truncate"] = ("rss_news", "tech")
    try:
        rows, stats = await _run(server, source="rss")
    finally:
        del server.sources.feeds["truncate"], FEED_KINDS["truncate"]
    assert stats["llm_errors"] == 1 and rows
    assert any("truncated at max_tokens" in error for error in stats.errors)


async def test_a_limit_samples_one_row_per_domain_first(server: FakeNewsServer) -> None:
    every, _ = await _run(server)
    first, stats = await _run(server, limit=3, seed=7)
    assert first == (await _run(server, limit=3, seed=7))[0]  # deterministic for a seed
    assert stats["sampled_out"] == 1 and len({row["topical_domain"] for row in first}) == 3
    assert [row for row in every if row in first] == first  # file order kept


def test_cli_writes_the_cohort_and_a_stats_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeNewsServer(SOURCES) as live:  # the real clock: documents dated from now
        for key, value in live.env().items():
            monkeypatch.setenv(key, value)
        feeds = tmp_path / "feeds.toml"
        feeds.write_text("".join(
            f'[[source]]\nurl = "{f.url}"\nsource_kind = "{f.source_kind}"\n'
            f'topical_domain = "{f.topical_domain}"\n\n' for f in _feeds(live)))
        out = tmp_path / "fresh.jsonl"
        code = main(["news", "generate", "--feeds", str(feeds), "--geos", "US,US-CA",
                     "--min-candidates", "6", "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["query_text"] for row in rows] == [
        "lakers trade for star", "dense retrieval for rare", "city council passes transit",
        "fed rate decision"]
    err = capsys.readouterr().err
    assert "news generate: feeds 11, geos 2, fetch errors 4" in err and "rows 4" in err
    assert f"wrote 4 rows to {out}" in err


async def test_one_unreachable_feed_host_costs_that_feed_only(server: FakeNewsServer) -> None:
    dead = closed_port_url()
    rows, stats = await _run(server, source="rss",
                             extra_feeds=(Feed(f"{dead}/feed.xml", "rss_news", "other"),))
    assert rows and stats["fetch_errors"] == 5  # the 4 bad feeds and the dead host
    assert any(f"cannot reach {dead.removeprefix('http://')} (connection refused)" in error
               for error in stats.errors)


def test_cli_with_no_host_reachable_stops_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = closed_port_url()
    monkeypatch.setenv("OPENROUTER_API_KEY", "fake-llm-key")
    monkeypatch.setenv("NEEDLE_TRENDS_BASE_URL", dead)
    feeds = tmp_path / "feeds.toml"
    feeds.write_text("".join(f'[[source]]\nurl = "{dead}/{n}.xml"\nsource_kind = "rss_news"\n'
                             f'topical_domain = "sports"\n\n' for n in range(30)))
    out = tmp_path / "fresh.jsonl"
    code = main(["news", "generate", "--feeds", str(feeds), "--geos", "US", "--out", str(out)])
    assert code == 1 and not out.exists()
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("needle news generate: ")
    assert f"cannot reach {dead.removeprefix('http://')} (connection refused)" in last
    assert "--feeds FILE" in last or "NEEDLE_TRENDS_BASE_URL" in last


def test_cli_rejects_a_bad_geo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["news", "generate", "--geos", "US,california", "--out", "-"])
    assert "CALIFORNIA: not a geo code" in capsys.readouterr().err


def test_us_all_is_52_geos() -> None:
    assert len(US_ALL) == 52 and US_ALL[0] == "US" and "US-DC" in US_ALL
    assert len(set(US_ALL)) == 52


def test_generated_cohort_runs_through_the_news_eval(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: generate from the fakes, then `pytest evals -k news` on the output with
    loopback engines and judge; the judge sees each row's own date as today."""
    out = tmp_path / "fresh.jsonl"
    with FakeNewsServer(SOURCES, now=lambda: NOW) as news:
        monkeypatch.setenv("OPENROUTER_API_KEY", "fake-llm-key")
        rows, _ = asyncio.run(_run(news))
    write_rows(rows, str(out))
    with FakeSearchServer() as search:
        for key, value in search.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        result = run_evals(pytester, tmp_path / "results", "--queries", str(out),
                           "--engines", "exa", module="test_news.py")
        judged = search.requests["judge"]
        prompts = list(search.verdict_prompts)
    assert prompts and all("Today's date: 2026-07-02" in prompt for prompt in prompts)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == len(rows) == 4
    (report_path,) = (tmp_path / "results" / "search").glob("news__fresh__*.json")
    report = json.loads(report_path.read_text())
    assert report["num_queries"] == 4 and report["engines"]["exa"]["search_errors"] == 0
    assert report["engines"]["exa"]["judge_errors"] == 0 and judged > 4
    queries = {row["query"] for row in report["engines"]["exa"]["per_query"]}
    assert queries == {row["query_text"] for row in rows}


def test_cli_without_an_llm_key_fails_before_fetching(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with FakeNewsServer(SOURCES) as live:
        for key, value in live.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("OPENROUTER_API_KEY", "")
        code = main(["news", "generate", "--source", "trending", "--geos", "US",
                     "--out", str(tmp_path / "fresh.jsonl")])
        fetched = sum(live.requests.values())
    assert code == 2 and "OPENROUTER_API_KEY" in capsys.readouterr().err
    assert fetched == 0 and not (tmp_path / "fresh.jsonl").exists()
