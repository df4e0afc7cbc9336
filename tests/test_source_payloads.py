"""A source that answers in a shape it never documented: the clients say which source and
which field, over real HTTP to a loopback server, instead of failing on a TypeError."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date

import pytest

from needle_lib.benches.finance.sources import GleifClient, SecClient, WikidataClient
from needle_lib.benches.legal.sources import CourtListenerClient, EcfrClient
from needle_lib.benches.scholar.sources import EuropePmc, NcbiIdConverter
from needle_lib.jsonio import JSON
from needle_lib.net.sources import SourceClient, SourceError
from needle_lib.testing.finance_sources import CONTACT, no_wait
from needle_lib.testing.loopback import CannedJSONServer

Call = Callable[[SourceClient], Awaitable[object]]


def _wikidata_search(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, WikidataClient)
    return client.search("Acme")


def _wikidata_labels(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, WikidataClient)
    return client.labels(["Q1"])


def _wikidata_claims(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, WikidataClient)
    return client.claims("Q1")


def _sec_filings(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, SecClient)
    client.data_base_url = client.base_url  # both SEC hosts on the one fake
    return client.recent_filings(42, ["10-K"])


def _gleif(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, GleifClient)
    return client.lei_by_legal_name("Acme Inc")


def _europepmc(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, EuropePmc)
    return client.listing(first=date(2026, 1, 1), last=date(2026, 1, 31), page_size=5)


def _ncbi(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, NcbiIdConverter)
    return client.pmids(["123"])


def _courtlistener(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, CourtListenerClient)
    return client.opinions("ca9", filed_after=date(2026, 1, 1), filed_before=date(2026, 1, 31))


def _ecfr(client: SourceClient) -> Awaitable[object]:
    assert isinstance(client, EcfrClient)
    return client.issue_dates()


_ENTITY = "/wiki/Special:EntityData/Q1.json"
CASES: list[tuple[type[SourceClient], str, JSON, Call, str]] = [
    (WikidataClient, "/w/api.php", {"search": "Acme Corp"}, _wikidata_search,
     "search: expected an array, got a string"),
    (WikidataClient, "/w/api.php", {"search": [{"id": {"Q": 1}}]}, _wikidata_search,
     r"search\[\].id: expected a string, got an object"),
    (WikidataClient, "/w/api.php", {"entities": {"Q1": {"labels": {"en": {"value": ["x"]}}}}},
     _wikidata_labels, "entities.Q1.labels.en.value: expected a string, got an array"),
    (WikidataClient, "/w/api.php",
     {"entities": {"Q1": {"labels": {"en": {"value": "Acme"}}, "aliases": {"en": "Acme"}}}},
     _wikidata_labels, "entities.Q1.aliases.en: expected an array, got a string"),
    (WikidataClient, _ENTITY, {"entities": ["Q1"]}, _wikidata_claims,
     "entities: expected an object, got an array"),
    (WikidataClient, _ENTITY, {"entities": {"Q1": {"claims": [1, 2]}}}, _wikidata_claims,
     "entities.Q1.claims: expected an object, got an array"),
    (SecClient, "/submissions/CIK0000000042.json", {"filings": {"recent": ["10-K"]}},
     _sec_filings, "filings.recent: expected an object, got an array"),
    (SecClient, "/submissions/CIK0000000042.json",
     {"filings": {"recent": {"form": 10, "accessionNumber": ["a"]}}}, _sec_filings,
     "filings.recent.form: expected an array, got a number"),
    (GleifClient, "/lei-records", {"data": {"id": "x"}}, _gleif,
     "data: expected an array, got an object"),
    (GleifClient, "/lei-records",
     {"data": [{"attributes": {"entity": {"legalName": {"name": True}}}}]}, _gleif,
     r"data\[\].attributes.entity.legalName.name: expected a string, got a boolean"),
    (EuropePmc, "/search", {"resultList": {"result": {"title": "x"}}}, _europepmc,
     "resultList.result: expected an array, got an object"),
    (EuropePmc, "/search", {"resultList": {"result": [{"title": {"b": "Bold"}}]}}, _europepmc,
     r"resultList.result\[\].title: expected a string, got an object"),
    (EuropePmc, "/search", {"resultList": {"result": [{
        "title": "T", "abstractText": "A", "firstPublicationDate": "2026-01-02",
        "pmcid": "PMC123", "authorList": {"author": "A. B."}}]}},
     _europepmc, "authorList.author: expected an array, got a string"),
    (NcbiIdConverter, "/tools/idconv/api/v1/articles/", {"records": ["PMC123"]}, _ncbi,
     r"records\[\]: expected an object, got a string"),
    (NcbiIdConverter, "/tools/idconv/api/v1/articles/",
     {"records": [{"pmcid": "PMC123", "pmid": [1]}]}, _ncbi,
     r"records\[\].pmid: expected a string, got an array"),
    (CourtListenerClient, "/api/rest/v4/search/", {"results": {"count": 0}}, _courtlistener,
     "expected an object with a 'results' list"),
    (EcfrClient, "/api/versioner/v1/titles.json", ["title 1"], _ecfr,
     "expected an object with a 'titles' list"),
]


@pytest.mark.parametrize(("client_class", "path", "body", "call", "message"), CASES,
                         ids=[f"{c[0].source}-{i}" for i, c in enumerate(CASES)])
async def test_a_wrong_shape_is_an_error_naming_source_and_field(
        client_class: type[SourceClient], path: str, body: JSON, call: Call,
        message: str) -> None:
    with CannedJSONServer({path: body}) as server:
        env = {client_class.base_url_env(): server.url, "NEEDLE_CONTACT": CONTACT,
               "COURTLISTENER_API_TOKEN": "token-for-the-fake"}
        client = client_class(env=env, sleep=no_wait)
        try:
            with pytest.raises(SourceError, match=message) as caught:
                await call(client)
        finally:
            await client.aclose()
    assert str(caught.value).startswith(f"{client_class.source}: {server.url}{path}")


async def test_absent_fields_are_no_value_not_an_error() -> None:
    """A source may leave out what it does not know; only a wrong type is an error."""
    with CannedJSONServer({"/w/api.php": {"entities": {"Q1": {}, "Q2": None}}}) as server:
        client = WikidataClient(env={"NEEDLE_WIKIDATA_BASE_URL": server.url,
                                     "NEEDLE_CONTACT": CONTACT}, sleep=no_wait)
        try:
            assert await client.labels(["Q1", "Q2"]) == {}
            assert await client.search("Acme") == []
        finally:
            await client.aclose()
