"""Scholar sources over loopback fakes in the real shapes: arXiv Atom and HTML, Europe PMC
JSON and JATS, NCBI's ID converter; arXiv's one-call-per-3-s rule; safe XML parsing."""

from __future__ import annotations

import asyncio
import itertools
from datetime import date

import httpx
import pytest
from fakeclock import FakeTime

from needle_lib.benches.scholar.bodies import BodyError, html_body_text, jats_body_text
from needle_lib.benches.scholar.sources import (
    ArxivApi,
    ArxivHtml,
    EuropePmc,
    NcbiIdConverter,
    parse_arxiv_atom,
)
from needle_lib.net.sources import SourceError
from needle_lib.testing.scholar_papers import A1, A3, A5, CORPUS, E1, E2, NOW
from needle_lib.testing.scholar_sources import FakeScholarSources


@pytest.fixture(scope="module")
def fake():
    with FakeScholarSources(CORPUS, NOW) as server:
        yield server


def client(cls, fake, time=None, **env):
    time = time or FakeTime()
    return cls(env={**fake.env(), **env}, sleep=time.sleep, clock=time.clock)


async def test_arxiv_listing_reads_the_atom_feed(fake):
    api = client(ArxivApi, fake)
    papers = await api.listing("computer science", first=date(2026, 11, 24),
                               last=date(2026, 11, 28), max_results=20)
    await api.aclose()
    by_id = {p.arxiv: p for p in papers}
    assert list(by_id) == ["2611.01234", "2611.02345", "2611.03456", "2611.09999"]  # newest 1st
    a1 = by_id["2611.01234"]  # version dropped from <id>, title unwrapped, abstract flattened
    assert (a1.title, a1.abstract) == (A1.title, A1.abstract)
    assert a1.url == "https://arxiv.org/abs/2611.01234"
    assert a1.authors == ("Ada Lovelace", "Grace Hopper")
    assert a1.published.date() == date(2026, 11, 27) and a1.domain == "computer science"
    assert by_id["2611.03456"].domain == "physical sciences"  # primary math.PR, cross-listed


async def test_arxiv_listing_sends_the_documented_query(fake):
    seen = []
    transport = httpx.AsyncHTTPTransport()

    async def record(request):
        seen.append(request.url.params)

    http = httpx.AsyncClient(transport=transport, event_hooks={"request": [record]})
    api = ArxivApi(env=fake.env(), client=http)
    await api.listing("social sciences", first=date(2026, 5, 1), last=date(2026, 5, 31),
                      max_results=40)
    await http.aclose()
    (params,) = seen
    assert params["search_query"] == ("(cat:econ.* OR cat:q-fin.*) AND "
                                      "submittedDate:[202605010000 TO 202605312359]")
    assert (params["sortBy"], params["sortOrder"], params["max_results"]) == (
        "submittedDate", "descending", "40")


async def test_arxiv_api_calls_start_at_least_3_seconds_apart(fake):
    time = FakeTime()
    starts: list[float] = []

    async def record(request):
        starts.append(time.clock())

    http = httpx.AsyncClient(event_hooks={"request": [record]})
    api = ArxivApi(env=fake.env(), client=http, sleep=time.sleep, clock=time.clock)
    await asyncio.gather(*(api.listing("computer science", first=date(2026, 11, 1),
                                       last=date(2026, 11, 28), max_results=5)
                           for _ in range(4)))
    await http.aclose()
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 4 and all(gap >= 3.0 for gap in gaps), gaps


def test_an_arxiv_api_error_entry_is_a_source_error():
    feed = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><entry>
<id>http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345</id><title>Error</title>
<summary>incorrect id format for 1234.12345</summary></entry></feed>"""
    with pytest.raises(SourceError, match="API error: incorrect id format"):
        parse_arxiv_atom(feed)
    with pytest.raises(SourceError, match="not Atom XML"):
        parse_arxiv_atom("<html>rate limited</html")


def test_atom_entries_without_an_abstract_or_date_are_skipped():
    feed = """<feed xmlns="http://www.w3.org/2005/Atom">
<entry><id>http://arxiv.org/abs/2401.00001v1</id><title>T</title><summary>S</summary>
<published>2026-01-02T00:00:00Z</published></entry>
<entry><id>http://arxiv.org/abs/2401.00002v1</id><title>T</title><summary></summary>
<published>2026-01-02T00:00:00Z</published></entry>
<entry><id>http://arxiv.org/abs/2401.00003v1</id><title>T</title><summary>S</summary></entry>
</feed>"""
    assert [p.arxiv for p in parse_arxiv_atom(feed)] == ["2401.00001"]


async def test_arxiv_html_body_is_the_running_text_only(fake):
    html = client(ArxivHtml, fake)
    body = await html.body(A3.arxiv)
    with pytest.raises(SourceError) as missing:
        await html.body("2611.04567")
    await html.aclose()
    assert missing.value.status == 404
    lines = body.splitlines()
    assert lines[0].startswith("Simulations used the Poincaré ball with seven million")
    assert "Overview of the measurements." in lines[-1]  # the figure caption
    for absent in (A3.abstract, "Turing", "Back to arXiv", "not text", "LaTeXML", "x_1",
                   "Ada Lovelace"):
        assert absent not in body  # abstract, bibliography, nav, script, footer, math, authors


def test_html_without_an_article_yields_no_body():
    with pytest.raises(BodyError, match="no paragraphs inside <article>"):
        html_body_text("<html><body><p>Just a landing page</p></body></html>")


async def test_europepmc_listing_reads_core_json(fake):
    epmc = client(EuropePmc, fake)
    papers = await epmc.listing(first=date(2026, 11, 10), last=date(2026, 11, 28),
                                page_size=25)
    await epmc.aclose()
    e1, e2 = papers
    assert e1.title == E1.title  # the <i> markup is gone
    assert e1.abstract == f"Background {E1.abstract}"
    assert (e1.pmid, e1.pmcid, e1.doi) == ("41000001", "12500001", "10.3389/fpubh.2026.1234567")
    assert e1.url == "https://europepmc.org/article/PMC/PMC12500001"
    assert (e2.pmid, e2.pmcid) == (None, "12500002")
    assert e1.domain == "health sciences" and e1.authors == ("Ada Lovelace", "Grace Hopper")


async def test_europepmc_full_text_is_the_jats_body(fake):
    epmc = client(EuropePmc, fake)
    body = await epmc.body(E1.pmcid)
    await epmc.aclose()
    assert body.splitlines()[0] == f"{E1.paragraphs[0]} using ."
    assert "Overview of the cohort and follow-up." in body  # figure caption paragraph
    for absent in (E1.abstract, "12.5", "Turing", "Journal of Fake Results"):
        assert absent not in body  # abstract, table, references, front matter


@pytest.mark.parametrize(("xml", "message"), [
    ('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
     "<article><body><p>&lol2;</p></body></article>", "not usable JATS XML"),
    ("<article><front><p>x</p></front></article>", "no <body>"),
    ("<article><body><sec><title>Empty</title></sec></body></article>", "no paragraphs"),
    ("<article><body><p>unclosed</body></article>", "not usable JATS XML"),
])
def test_unsafe_or_useless_jats_is_refused(xml, message):
    with pytest.raises(BodyError, match=message):
        jats_body_text(xml)


async def test_id_converter_maps_pmcids_to_pmids_once_each(fake):
    ncbi = client(NcbiIdConverter, fake, NEEDLE_CONTACT="ops@example.org")
    before = fake.requests["ncbi"]
    first = await ncbi.pmids([E2.pmcid, E1.pmcid, "99999999"])
    again = await ncbi.pmids([E2.pmcid, E1.pmcid])
    await ncbi.aclose()
    assert first == {"12500002": "41000002", "12500001": "41000001", "99999999": None}
    assert again == {"12500002": "41000002", "12500001": "41000001"}
    assert fake.requests["ncbi"] - before == 1  # the second call came from the cache


async def test_id_converter_sends_tool_and_email():
    seen = []

    def answer(request):
        seen.append(request.url.params)
        return httpx.Response(200, json={"status": "ok", "records": [
            {"requested-id": "PMC1", "pmcid": "PMC1", "pmid": 23193287}]})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    ncbi = NcbiIdConverter(env={"NEEDLE_CONTACT": "ops@example.org"}, client=http)
    assert await ncbi.pmids(["1"]) == {"1": "23193287"}
    await http.aclose()
    (params,) = seen
    assert (params["ids"], params["format"], params["email"]) == (
        "PMC1", "json", "ops@example.org")
    assert params["tool"] and " " not in params["tool"]


def test_base_url_overrides_name_every_source():
    assert [c.base_url_env() for c in (ArxivApi, ArxivHtml, EuropePmc, NcbiIdConverter)] == [
        "NEEDLE_ARXIV_BASE_URL", "NEEDLE_ARXIV_HTML_BASE_URL", "NEEDLE_EUROPEPMC_BASE_URL",
        "NEEDLE_NCBI_BASE_URL"]
    assert (ArxivApi.min_interval, ArxivApi.max_in_flight) == (3.0, 1)


async def test_a_5xx_is_retried_after_retry_after_then_succeeds():
    time = FakeTime()
    answers = iter([httpx.Response(503, headers={"Retry-After": "7"}),
                    httpx.Response(200, text=f"<article><body><p>{A5.paragraphs[0]}</p>"
                                             "</body></article>")])
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: next(answers)))
    epmc = EuropePmc(env={}, client=http, sleep=time.sleep, clock=time.clock)
    assert await epmc.body("1") == A5.paragraphs[0]
    await http.aclose()
    assert 7 in time.sleeps and epmc.stats.retries == 1
