"""Finance source clients against loopback fakes in the real response shapes."""

from __future__ import annotations

import httpx
import pytest
import respx

from needle_lib.benches.finance.sources import (
    Company,
    GleifClient,
    SecClient,
    WikidataClient,
)
from needle_lib.net.sources import MissingContact, SourceError
from needle_lib.testing.finance_sources import CONTACT, FakeFinanceSources, no_wait


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture(scope="module")
def fake():
    with FakeFinanceSources() as server:
        yield server


def test_sec_and_wikidata_refuse_to_start_without_a_contact() -> None:
    for client in (SecClient, WikidataClient):
        with pytest.raises(MissingContact, match="NEEDLE_CONTACT"):
            client(env={})
    GleifClient(env={})  # GLEIF asks for no contact


async def test_company_tickers_in_sec_order_with_contact_user_agent(fake) -> None:
    sec = SecClient(env=fake.env(), sleep=no_wait)
    companies = await sec.company_tickers()
    await sec.aclose()
    assert companies[0] == Company(1000001, "ACMR", "ACME ROBOTICS INC")
    assert [c.ticker for c in companies][:3] == ["ACMR", "BORE", "CBLT"]
    assert companies[1].search_title == "BOREALIS ENERGY CORP"
    agents = [agent for path, agent in fake.requests if path == "/files/company_tickers.json"]
    assert agents and all(agent.endswith(f"({CONTACT})") for agent in agents)


@respx.mock
async def test_company_tickers_keep_row_order_even_when_keys_were_resorted() -> None:
    rows = {str(i): {"cik_str": i + 1, "ticker": f"T{i}", "title": f"Company {i}"}
            for i in range(12)}
    resorted = {key: rows[key] for key in sorted(rows)}  # "10" before "2"
    resorted["5"] = {"cik_str": 6, "ticker": "", "title": "No Ticker"}  # dropped
    respx.get("https://www.sec.gov/files/company_tickers.json").respond(json=resorted)
    sec = SecClient(env={"NEEDLE_CONTACT": CONTACT}, sleep=no_wait)
    tickers = [c.ticker for c in await sec.company_tickers()]
    await sec.aclose()
    assert tickers == [f"T{i}" for i in range(12) if i != 5]


@respx.mock
async def test_both_sec_hosts_share_one_ten_per_second_limit() -> None:
    respx.get("https://www.sec.gov/files/company_tickers.json").respond(json={})
    respx.get("https://data.sec.gov/submissions/CIK0000000042.json").respond(json={})
    time = FakeTime()
    sec = SecClient(env={"NEEDLE_CONTACT": CONTACT}, sleep=time.sleep, clock=time.clock)
    await sec.company_tickers()
    await sec.recent_filings(42, ["10-K"])
    await sec.company_tickers()
    await sec.aclose()
    assert time.sleeps == [0.1, 0.1]


async def test_each_sec_host_has_its_own_override(fake) -> None:
    env = {"NEEDLE_CONTACT": CONTACT, "NEEDLE_SEC_BASE_URL": fake.url,
           "NEEDLE_SEC_DATA_BASE_URL": fake.url + "/"}
    sec = SecClient(env=env, sleep=no_wait)
    assert (sec.base_url, sec.data_base_url) == (fake.url, fake.url)
    assert SecClient(env={"NEEDLE_CONTACT": CONTACT}).data_base_url == "https://data.sec.gov"
    gaap = await sec.company_facts(1000001)
    assert "NetIncomeLoss" in gaap and gaap["NetIncomeLoss"]["units"]["USD"]
    assert await sec.company_facts(1000005) == {}  # SEC's 404: no XBRL facts
    filings = await sec.recent_filings(1000001, ["10-K", "10-Q", "8-K"])
    assert [(f.form, f.accession) for f in filings] == [("8-K", "0001000001-26-000088")]
    assert filings[0].document_path == \
        "/Archives/edgar/data/1000001/000100000126000088/acme-8k.htm"
    assert "Halvorsen Marine Systems" in await sec.document(filings[0])
    await sec.aclose()


async def test_429_with_retry_after_is_waited_out_and_counted() -> None:
    path = "/api/xbrl/companyfacts/CIK0001000001.json"
    time = FakeTime()
    with FakeFinanceSources(throttle={path: 1}, retry_after="3") as fake:
        sec = SecClient(env=fake.env(), sleep=time.sleep, clock=time.clock)
        gaap = await sec.company_facts(1000001)
        await sec.aclose()
        assert fake.paths(path) == [path, path]
    assert gaap
    assert 3.0 in time.sleeps
    assert (sec.stats.requests, sec.stats.retries, sec.stats.errors) == (1, 1, 0)


async def test_wikidata_search_claims_and_labels(fake) -> None:
    wikidata = WikidataClient(env=fake.env(), sleep=no_wait)
    assert await wikidata.search("ACME ROBOTICS INC") == ["Q9001", "Q1001"]
    assert await wikidata.search("NOBODY") == []
    claims = await wikidata.claims("Q1001")
    assert claims["P169"][0]["rank"] == "deprecated"
    await wikidata.claims("Q1001")
    assert len(fake.paths("/wiki/Special:EntityData/Q1001.json")) == 1  # cached
    labels = await wikidata.labels(["Q1001", "Q30", "Q424242", "Q30"])
    assert labels["Q30"].label == "United States of America"
    assert "USA" in labels["Q30"].aliases
    assert "Q424242" not in labels  # missing entity
    with pytest.raises(SourceError, match="HTTP 500"):
        await wikidata.claims("Q1006")
    await wikidata.aclose()


@respx.mock
async def test_wikidata_labels_go_fifty_ids_per_request_and_redirects_resolve() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        ids = request.url.params["ids"].split("|")
        assert len(ids) <= 50
        return httpx.Response(200, json={"entities": {
            q: {"id": q, "labels": {"en": {"language": "en", "value": q.lower()}}}
            for q in ids}})

    route = respx.get("https://www.wikidata.org/w/api.php").mock(side_effect=answer)
    respx.get("https://www.wikidata.org/wiki/Special:EntityData/Q5.json").respond(
        json={"entities": {"Q6": {"id": "Q6", "claims": {"P31": []}}}})  # Q5 merged into Q6
    wikidata = WikidataClient(env={"NEEDLE_CONTACT": CONTACT}, sleep=no_wait)
    labels = await wikidata.labels([f"Q{i}" for i in range(1, 121)])
    assert len(labels) == 120 and route.call_count == 3
    assert await wikidata.claims("Q5") == {"P31": []}
    await wikidata.aclose()


async def test_gleif_accepts_only_an_exact_legal_name(fake) -> None:
    gleif = GleifClient(env=fake.env(), sleep=no_wait)
    assert await gleif.lei_by_legal_name("BOREALIS ENERGY CORP") == "549300BOREALISENER77"
    assert await gleif.lei_by_legal_name("COBALT BANK & CO") is None  # only a near miss
    assert await gleif.lei_by_legal_name("NOBODY AT ALL") is None
    await gleif.aclose()
    accepts = [path for path, _ in fake.requests if path.startswith("/lei-records")]
    assert accepts and all("page%5Bsize%5D=5" in path for path in accepts)
