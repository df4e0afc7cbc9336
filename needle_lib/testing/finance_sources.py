"""Loopback fakes of the finance sources (SEC, Wikidata, GLEIF) and of the filing-query LLM.

They serve a small *synthetic* world (invented companies, people, domains and LEIs) in the
real, documented response shapes: SEC ``company_tickers.json``, XBRL ``companyfacts`` and
``submissions``, EDGAR Archives documents; Wikidata ``wbsearchentities``,
``Special:EntityData`` claims (ranks, qualifiers) and ``wbgetentities``; GLEIF's JSON:API
``lei-records``; OpenAI chat completions. Each company exercises a rule of generation:

===================  ========================================================================
ACME ROBOTICS        rich: deprecated, ended and superseded CEOs; HQ via P159; dated head
                     counts; a non-company search hit first; YTD and comparative XBRL facts
BOREALIS ENERGY      "/DE/" title; preferred CEO; LEI only in GLEIF (one near miss, one exact);
                     only year-to-date XBRL; a thin filing document
COBALT BANK          company by P414 only; GLEIF near miss only; the LLM refuses
DUNMORE FOODS        three facts (dropped); the LLM leaks an accession number
EMBER ANALYTICS      unknown to Wikidata; no XBRL (404); no submissions (404)
FALCON AEROSPACE     Wikidata answers 500 (a fetch error); the LLM's span is not in the filing
GRANITE LOGISTICS    two share classes, one CIK; curly quotes and a no-break space in the span
HELIX, IRONWOOD,     good filings (non-breaking hyphen, fenced reply, older revenue concept)
JUNIPER, KESTREL
===================  ========================================================================

``python -m needle_lib.testing.finance_sources PATH`` rewrites the sample gold file
(``fixtures/gold/finance.sample.jsonl``) from this world.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from needle_lib.benches.finance.companies import Tier
from needle_lib.console import count_of
from needle_lib.jsonio import JSON, JSONObject
from needle_lib.testing.chat import completion, message_texts

if TYPE_CHECKING:
    from needle_lib.benches.finance.generate import FinanceRow
from needle_lib.testing.loopback import LoopbackServer, Response

NOW = datetime(2026, 7, 2, 14, 25, tzinfo=UTC)
SEED = 7
#: Tiers over this world's 12 listings (the real ones span 2 500 rows).
TIERS = (Tier("mega", 0, 4), Tier("large", 4, 8), Tier("mid", 8, 12))
CONTACT = "gold-tests@example.org"
LLM_MODEL = "fake/filing-writer"

_JSON = "application/json"


# --- Wikidata ----------------------------------------------------------------------------

def _item(qid: str) -> JSONObject:
    return {"value": {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid},
            "type": "wikibase-entityid"}


def _time(year: int, month: int = 0, day: int = 0) -> JSONObject:
    precision = 11 if day else 10 if month else 9
    return {"value": {"time": f"+{year:04d}-{month:02d}-{day:02d}T00:00:00Z", "timezone": 0,
                      "before": 0, "after": 0, "precision": precision,
                      "calendarmodel": "http://www.wikidata.org/entity/Q1985727"},
            "type": "time"}


def _string(text: str) -> JSONObject:
    return {"value": text, "type": "string"}


def _quantity(amount: int) -> JSONObject:
    return {"value": {"amount": f"+{amount}", "unit": "1"}, "type": "quantity"}


_DATATYPES = {"wikibase-entityid": "wikibase-item", "time": "time", "string": "string",
              "quantity": "quantity"}


def _snak(pid: str, datavalue: JSONObject | None) -> JSONObject:
    if datavalue is None:  # an unknown value ("somevalue"): no datavalue at all
        return {"snaktype": "somevalue", "property": pid, "hash": f"h{pid}",
                "datatype": "time"}
    return {"snaktype": "value", "property": pid, "hash": f"h{pid}", "datavalue": datavalue,
            "datatype": _DATATYPES[str(datavalue["type"])]}


def _digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:8]


def _statement(pid: str, value: JSONObject, rank: str = "normal",
               **qualifiers: JSONObject | None) -> JSONObject:
    return {
        "mainsnak": _snak(pid, value), "type": "statement", "rank": rank,
        "id": f"Q$stmt-{pid}-{_digest(value)}",
        "qualifiers": {q: [_snak(q, v)] for q, v in qualifiers.items()},
        "qualifiers-order": list(qualifiers), "references": [],
    }


@dataclass(frozen=True)
class WikiItem:
    label: str
    claims: dict[str, list[JSONObject]]
    aliases: tuple[str, ...] = ()


def _claims(**by_property: list[JSONObject]) -> dict[str, list[JSONObject]]:
    return by_property


BUSINESS, PUBLIC_COMPANY, BANK, CITY, COUNTRY_CLASS = (
    "Q4830453", "Q891723", "Q22687", "Q515", "Q6256")

WIKIDATA: dict[str, WikiItem] = {
    "Q1001": WikiItem("Acme Robotics, Inc.", _claims(
        P31=[_statement("P31", _item(PUBLIC_COMPANY))],
        P169=[
            _statement("P169", _item("Q2001"), "deprecated", P580=_time(2021)),
            _statement("P169", _item("Q2002"), P580=_time(2012, 5), P582=_time(2019, 2)),
            _statement("P169", _item("Q2005"), P580=_time(2015), P582=None),
            _statement("P169", _item("Q2003"), P580=_time(2019, 2, 11)),
            _statement("P169", _item("Q2004"), P580=_time(2016)),
        ],
        P571=[_statement("P571", _time(1984, 3, 1))],
        P17=[_statement("P17", _item("Q30"))],
        P159=[_statement("P159", _item("Q3001"))],
        P856=[_statement("P856", _string("https://investors.acme-robotics.com/home"))],
        P1128=[
            _statement("P1128", _quantity(41000), P585=_time(2023)),
            _statement("P1128", _quantity(45200), P585=_time(2025, 12, 31)),
            _statement("P1128", _quantity(39000)),
        ],
        P1278=[_statement("P1278", _string("549300ACMEROBOTICS42"))],
    ), ("Acme Robotics", "Acme")),
    "Q9001": WikiItem("Acme Robotics", _claims(  # a TV episode of the same name
        P31=[_statement("P31", _item("Q21191270"))],
    )),
    "Q1002": WikiItem("Borealis Energy", _claims(
        P31=[_statement("P31", _item(BUSINESS))],
        P169=[
            _statement("P169", _item("Q2011"), "preferred", P580=_time(2010)),
            _statement("P169", _item("Q2012"), P580=_time(2021)),
        ],
        P571=[_statement("P571", _time(1999))],
        P17=[_statement("P17", _item("Q16"))],
        P856=[_statement("P856", _string("http://www.borealis-energy.co.uk/"))],
        P1128=[_statement("P1128", _quantity(12000), P585=_time(2021))],
    ), ("Borealis Energy Corp",)),
    "Q1003": WikiItem("Cobalt Bank", _claims(
        P31=[_statement("P31", _item(BANK))],
        P414=[_statement("P414", _item("Q13677"))],
        P169=[_statement("P169", _item("Q2021"))],
        P571=[_statement("P571", _time(1872))],
        P159=[_statement("P159", _item("Q3003"))],
        P856=[_statement("P856", _string("https://cobaltbank.com"))],
        P1128=[_statement("P1128", _quantity(8200), P585=_time(2025))],
    ), ("Cobalt Bank & Co",)),
    "Q9003": WikiItem("cobalt", _claims(P31=[_statement("P31", _item("Q11344"))])),
    "Q1004": WikiItem("Dunmore Foods", _claims(
        P31=[_statement("P31", _item(BUSINESS))],
        P571=[_statement("P571", _time(1931))],
        P856=[_statement("P856", _string("https://dunmorefoods.ie"))],
    )),
    "Q1007": WikiItem("Granite Logistics", _claims(
        P31=[_statement("P31", _item(PUBLIC_COMPANY))],
        P169=[_statement("P169", _item("Q2031"), P580=_time(2017))],
        P571=[_statement("P571", _time(1962))],
        P159=[_statement("P159", _item("Q3007"))],
        P856=[_statement("P856", _string("https://www.granitelogistics.com"))],
        P1128=[_statement("P1128", _quantity(23100), P585=_time(2026))],
        P1278=[_statement("P1278", _string("549300GRANITELOGI071"))],
    )),
    "Q1008": WikiItem("Helix Therapeutics", _claims(
        P31=[_statement("P31", _item(PUBLIC_COMPANY))],
        P169=[_statement("P169", _item("Q2041"), P580=_time(2014), P582=_time(2024))],
        P571=[_statement("P571", _time(2009))],
        P17=[_statement("P17", _item("Q30"))],
        P856=[_statement("P856", _string("https://helixtx.com"))],
        P1128=[_statement("P1128", _quantity(1450), P585=_time(2025))],
        P1278=[_statement("P1278", _string("549300HELIXTHERAPY15"))],
    )),
    "Q2001": WikiItem("Wrong Person", {}),
    "Q2002": WikiItem("Marta Quill", {}),
    "Q2003": WikiItem("Dana Whitfield", {}, ("Dana J. Whitfield",)),
    "Q2004": WikiItem("Owen Lark", {}),
    "Q2005": WikiItem("Former Interim", {}),
    "Q2011": WikiItem("Ingrid Solberg", {}),
    "Q2012": WikiItem("Paul Vance", {}),
    "Q2021": WikiItem("Rupert Achebe", {}),
    "Q2031": WikiItem("Lena Ortiz", {}),
    "Q2041": WikiItem("Sam Reyes", {}),
    "Q3001": WikiItem("Harborview", _claims(
        P31=[_statement("P31", _item(CITY))], P17=[_statement("P17", _item("Q30"))])),
    "Q3003": WikiItem("Ludgate", _claims(
        P31=[_statement("P31", _item(CITY))], P17=[_statement("P17", _item("Q145"))])),
    "Q3007": WikiItem("Tacoma", _claims(
        P31=[_statement("P31", _item(CITY))], P17=[_statement("P17", _item("Q30"))])),
    "Q30": WikiItem("United States of America", _claims(
        P31=[_statement("P31", _item(COUNTRY_CLASS))], P17=[_statement("P17", _item("Q30"))]),
        ("USA", "US", "United States", "America")),
    "Q16": WikiItem("Canada", _claims(P31=[_statement("P31", _item(COUNTRY_CLASS))]),
                    ("CA", "CAN")),
    "Q145": WikiItem("United Kingdom", _claims(P31=[_statement("P31", _item(COUNTRY_CLASS))]),
                     ("UK", "U.K.", "Britain")),
}
WIKIDATA_SEARCH: dict[str, list[str]] = {
    "ACME ROBOTICS INC": ["Q9001", "Q1001"],
    "BOREALIS ENERGY CORP": ["Q1002"],
    "COBALT BANK & CO": ["Q9003", "Q1003"],
    "DUNMORE FOODS LTD": ["Q1004"],
    "FALCON AEROSPACE CORP": ["Q1006"],
    "GRANITE LOGISTICS INC": ["Q1007"],
    "HELIX THERAPEUTICS INC": ["Q1008"],
}
#: Items whose Special:EntityData keeps failing (HTTP 500): a fetch error for that company.
WIKIDATA_BROKEN = frozenset({"Q1006"})


# --- GLEIF -------------------------------------------------------------------------------

GLEIF: dict[str, list[tuple[str, str]]] = {  # filter value → (legal name, LEI) records
    "BOREALIS ENERGY CORP": [("BOREALIS ENERGY CORP PENSION TRUST", "549300BOREALISPEN012"),
                             ("Borealis Energy Corp", "549300BOREALISENER77")],
    "COBALT BANK & CO": [("COBALT BANK & CO HOLDINGS LLC", "549300COBALTHOLDIN34")],
}


# --- SEC ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Listed:
    cik: int
    ticker: str
    title: str


LISTINGS = (
    Listed(1000001, "ACMR", "ACME ROBOTICS INC"),
    Listed(1000002, "BORE", "BOREALIS ENERGY CORP /DE/"),
    Listed(1000003, "CBLT", "COBALT BANK & CO"),
    Listed(1000004, "DUNF", "DUNMORE FOODS LTD"),
    Listed(1000005, "EMBR", "EMBER ANALYTICS HOLDINGS"),
    Listed(1000006, "FLCN", "FALCON AEROSPACE CORP"),
    Listed(1000007, "GRNT", "GRANITE LOGISTICS INC"),
    Listed(1000007, "GRNTB", "GRANITE LOGISTICS INC"),
    Listed(1000008, "HLXT", "HELIX THERAPEUTICS INC"),
    Listed(1000010, "IRWD", "IRONWOOD MINING CO"),
    Listed(1000011, "JNPS", "JUNIPER SOFTWARE CORP"),
    Listed(1000012, "KSTM", "KESTREL MOTORS INC"),
)


def _fact(start: str, end: str, val: float, fy: int, fp: str, form: str, accn: str,
          filed: str) -> JSONObject:
    return {"start": start, "end": end, "val": val, "accn": accn, "fy": fy, "fp": fp,
            "form": form, "filed": filed}


def _quarters(cik: int, base: float, *, ytd_only: bool = False) -> list[JSON]:
    """A realistic run of one concept: quarters with their year-to-date and prior-year
    comparatives tagged with the filing's fy/fp, and the annual 10-K figure."""
    q = f"{cik:010d}-26-000101"
    q3 = f"{cik:010d}-25-000301"
    q2 = f"{cik:010d}-25-000201"
    k = f"{cik:010d}-26-000011"
    facts: list[JSON] = [
        _fact("2025-01-01", "2025-06-30", base * 2.1, 2025, "Q2", "10-Q", q2, "2025-08-01"),
        _fact("2025-01-01", "2025-09-30", base * 3.3, 2025, "Q3", "10-Q", q3, "2025-10-31"),
        _fact("2025-01-01", "2025-12-31", base * 4.4, 2025, "FY", "10-K", k, "2026-02-20"),
    ]
    if not ytd_only:
        facts += [
            _fact("2025-04-01", "2025-06-30", base * 1.1, 2025, "Q2", "10-Q", q2, "2025-08-01"),
            _fact("2024-04-01", "2024-06-30", base * 0.9, 2025, "Q2", "10-Q", q2, "2025-08-01"),
            _fact("2025-07-01", "2025-09-30", base * 1.2, 2025, "Q3", "10-Q", q3, "2025-10-31"),
            _fact("2026-01-01", "2026-03-31", base * 1.3, 2026, "Q1", "10-Q", q, "2026-05-01"),
            _fact("2025-01-01", "2025-03-31", base * 1.0, 2026, "Q1", "10-Q", q, "2026-05-01"),
        ]
    return facts


def _concept(label: str, unit: str, facts: list[JSON]) -> JSONObject:
    return {"label": label, "description": f"{label} (synthetic).", "units": {unit: facts}}


def _gaap(cik: int, scale: float, *, ytd_only: bool = False, revenue: str = "Revenues",
          concepts: Iterable[str] = ("NetIncomeLoss", "OperatingIncomeLoss",
                                     "EarningsPerShareDiluted")) -> JSONObject:
    gaap: JSONObject = {
        revenue: _concept("Revenues", "USD", _quarters(cik, scale * 10, ytd_only=ytd_only))}
    for concept in concepts:
        if concept == "EarningsPerShareDiluted":
            gaap[concept] = _concept("EPS, Diluted", "USD/shares",
                                     _quarters(cik, 1.25, ytd_only=ytd_only))
        else:
            gaap[concept] = _concept(concept, "USD", _quarters(cik, scale, ytd_only=ytd_only))
    return gaap


COMPANY_FACTS: dict[int, JSONObject] = {
    1000001: _gaap(1000001, 250_000_000.0),
    1000002: _gaap(1000002, 80_000_000.0, ytd_only=True),
    1000003: _gaap(1000003, 400_000_000.0),
    1000004: _gaap(1000004, 0, concepts=("EarningsPerShareDiluted",)),
    1000006: _gaap(1000006, 120_000_000.0),
    1000007: _gaap(1000007, 90_000_000.0),
    1000008: _gaap(1000008, -35_000_000.0, concepts=("ProfitLoss",)),
    1000010: _gaap(1000010, 60_000_000.0, revenue="SalesRevenueNet"),
    1000011: _gaap(1000011, 45_000_000.0),
    1000012: _gaap(1000012, 70_000_000.0),
}


@dataclass(frozen=True)
class FakeFiling:
    accession: str
    form: str
    filed: str
    document: str
    html: str


_BOILERPLATE = (
    "The registrant is a large accelerated filer as defined in Rule 12b-2 of the Exchange "
    "Act. This report contains forward-looking statements within the meaning of the Private "
    "Securities Litigation Reform Act of 1995, which are subject to risks and uncertainties "
    "that could cause actual results to differ materially from those projected. "
)


def _document(title: str, form: str, body: str, *, filler: int = 14) -> str:
    """An EDGAR-like primary document: head, script, inline-XBRL header, cover, body."""
    paragraphs = "".join(f"<p>{_BOILERPLATE}</p>\n" for _ in range(filler))
    return (
        f"<html><head><title>{title} {form}</title><style>p {{margin: 0}}</style></head>"
        "<body><script>var tracking = 'SCRIPT TEXT';</script>"
        '<div style="display:none"><ix:header><ix:hidden>HIDDEN XBRL FACT</ix:hidden>'
        "</ix:header></div>"
        "<p>UNITED STATES<br/>SECURITIES AND EXCHANGE COMMISSION</p>"
        f"<p>FORM {form}</p><p><b>{title}</b></p>\n"
        f"{paragraphs[: len(paragraphs) // 3]}<p>{body}</p>\n"
        f"{paragraphs[len(paragraphs) // 3:]}</body></html>"
    )


def _filing(cik: int, number: int, form: str, filed: str, body: str, title: str,
            **options: Any) -> FakeFiling:
    accession = f"{cik:010d}-26-{number:06d}"
    document = f"{title.split()[0].lower()}-{form.lower().replace('-', '')}.htm"
    return FakeFiling(accession, form, filed, document, _document(title, form, body, **options))


FILINGS: dict[int, list[FakeFiling]] = {
    1000001: [
        FakeFiling("0001000001-26-000099", "4", "2026-06-20", "form4.xml", "<xml/>"),
        _filing(1000001, 88, "8-K", "2026-06-02", "On May 29, 2026 Acme Robotics, Inc. "
                "entered into a definitive agreement to acquire Halvorsen Marine Systems AS "
                "for $412 million in cash.", "ACME ROBOTICS INC"),
        FakeFiling("0001000001-26-000070", "SC 13G", "2026-05-10", "sc13g.htm", "<p>x</p>"),
    ],
    1000002: [_filing(1000002, 41, "10-Q", "2026-05-08", "Quarterly report.",
                      "BOREALIS ENERGY CORP", filler=0)],
    1000003: [_filing(1000003, 12, "10-K", "2026-02-27", "Cobalt Bank & Co. annual report "
                      "on banking operations.", "COBALT BANK & CO")],
    1000004: [_filing(1000004, 31, "10-Q", "2026-05-12", "Dunmore Foods completed the "
                      "expansion of the Kilkenny dairy plant.", "DUNMORE FOODS LTD")],
    1000006: [_filing(1000006, 54, "8-K", "2026-06-15", "Falcon Aerospace announced a "
                      "launch services agreement.", "FALCON AEROSPACE CORP")],
    1000007: [_filing(1000007, 9, "10-K", "2026-02-25", "Granite Logistics signed the Port "
                      "of Tacoma\u00a0terminal lease for a 30-year term.",
                      "GRANITE LOGISTICS INC")],
    1000008: [_filing(1000008, 47, "10-Q", "2026-05-06", "Helix reported topline data from "
                      "the HLX\u2011401 Phase 2 trial in refractory gout.",
                      "HELIX THERAPEUTICS INC")],
    1000010: [_filing(1000010, 61, "8-K", "2026-06-22", "Ironwood Mining will begin the "
                      "closure of the Red Butte copper mine in the fourth quarter.",
                      "IRONWOOD MINING CO")],
    1000011: [_filing(1000011, 18, "8-K", "2026-04-14", "Juniper Software appointed Mara "
                      "Ellison as chief financial officer effective May 1.",
                      "JUNIPER SOFTWARE CORP")],
    1000012: [_filing(1000012, 73, "10-Q", "2026-05-04", "Kestrel Motors recalled 18,400 "
                      "Vireo sedans for a brake-line defect.", "KESTREL MOTORS INC")],
}

#: What the fake LLM answers for each company's filing (by the title in the prompt).
LLM_REPLIES: dict[str, str] = {
    "ACME ROBOTICS INC": 'acme robotics 8-K "acquire Halvorsen Marine Systems" deal',
    "COBALT BANK & CO": "NO_DISTINCT_QUERY",
    "DUNMORE FOODS LTD": 'dunmore foods 0001000004-26-000031 "Kilkenny dairy plant"',
    "FALCON AEROSPACE CORP": 'falcon aerospace "orbital tug contract with Nimbus"',
    "GRANITE LOGISTICS INC": "granite logistics \u201cPort of Tacoma terminal lease\u201d 10-K",
    "HELIX THERAPEUTICS INC": 'helix therapeutics "HLX-401 phase 2 trial" results',
    "IRONWOOD MINING CO": '```\nironwood mining "Red Butte copper mine" closure\n```',
    "JUNIPER SOFTWARE CORP": 'juniper software cfo "appointed Mara Ellison" 8-K',
    "KESTREL MOTORS INC": 'Query: kestrel motors "Vireo sedans" brake recall',
}


# --- the servers -------------------------------------------------------------------------

def _json(payload: Any, status: int = 200) -> Response:
    return status, _JSON, json.dumps(payload).encode()


def _not_found(what: str) -> Response:
    return 404, "text/html", f"<html><body>Not found: {what}</body></html>".encode()


class FakeFinanceSources(LoopbackServer):
    """SEC (both hosts), Wikidata and GLEIF on one loopback port.

    Point every base URL at ``url`` (``env()`` does it). ``throttle`` maps a path to a
    number of 429 answers (with ``Retry-After``) served before the real one.
    """

    def __init__(self, *, throttle: dict[str, int] | None = None, retry_after: str = "2"
                 ) -> None:
        self.requests: list[tuple[str, str]] = []  # (path with query, User-Agent)
        self._throttle = dict(throttle or {})
        self._retry_after = retry_after
        self._lock = threading.Lock()
        super().__init__()

    def env(self, **extra: str) -> dict[str, str]:
        return {"NEEDLE_SEC_BASE_URL": self.url, "NEEDLE_SEC_DATA_BASE_URL": self.url,
                "NEEDLE_WIKIDATA_BASE_URL": self.url, "NEEDLE_GLEIF_BASE_URL": self.url,
                "NEEDLE_CONTACT": CONTACT, **extra}

    def paths(self, prefix: str = "") -> list[str]:
        with self._lock:
            return [path for path, _ in self.requests if path.startswith(prefix)]

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        with self._lock:
            self.requests.append((path, headers.get("User-Agent", "")))
            throttled = self._throttle.get(path, 0)
            if throttled:
                self._throttle[path] = throttled - 1
        if throttled:
            return (429, _JSON, b'{"message": "slow down"}', {"Retry-After": self._retry_after})
        parts = urlsplit(path)
        route, query = unquote(parts.path), parse_qs(parts.query)
        if route == "/files/company_tickers.json":
            return _json({str(i): {"cik_str": c.cik, "ticker": c.ticker, "title": c.title}
                          for i, c in enumerate(LISTINGS)})
        if route.startswith("/api/xbrl/companyfacts/CIK"):
            return self._company_facts(int(route.rsplit("CIK", 1)[1].removesuffix(".json")))
        if route.startswith("/submissions/CIK"):
            return self._submissions(int(route.rsplit("CIK", 1)[1].removesuffix(".json")))
        if route.startswith("/Archives/edgar/data/"):
            return self._archive(route)
        if route == "/w/api.php":
            return self._wikidata_api(query)
        if route.startswith("/wiki/Special:EntityData/"):
            return self._entity(route.rsplit("/", 1)[1].removesuffix(".json"))
        if route == "/lei-records":
            return self._gleif(query)
        return _not_found(route)

    def _company_facts(self, cik: int) -> Response:
        gaap = COMPANY_FACTS.get(cik)
        if gaap is None:
            return _not_found(f"CIK{cik:010d}")
        title = next(c.title for c in LISTINGS if c.cik == cik)
        return _json({"cik": cik, "entityName": title, "facts": {
            "dei": {"EntityCommonStockSharesOutstanding": _concept(
                "Shares outstanding", "shares", [])},
            "us-gaap": gaap}})

    def _submissions(self, cik: int) -> Response:
        filings = FILINGS.get(cik)
        if filings is None:
            return _not_found(f"CIK{cik:010d}")
        listed = [c for c in LISTINGS if c.cik == cik]
        recent: dict[str, list[Any]] = {
            "accessionNumber": [f.accession for f in filings],
            "filingDate": [f.filed for f in filings],
            "reportDate": [f.filed for f in filings],
            "acceptanceDateTime": [f"{f.filed}T16:05:00.000Z" for f in filings],
            "act": ["34" for _ in filings],
            "form": [f.form for f in filings],
            "fileNumber": ["001-40000" for _ in filings],
            "filmNumber": ["26000000" for _ in filings],
            "items": ["" for _ in filings],
            "size": [len(f.html) for f in filings],
            "isXBRL": [1 for _ in filings],
            "isInlineXBRL": [1 for _ in filings],
            "primaryDocument": [f.document for f in filings],
            "primaryDocDescription": [f.form for f in filings],
        }
        return _json({"cik": str(cik), "entityType": "operating", "sic": "3569",
                      "name": listed[0].title, "tickers": [c.ticker for c in listed],
                      "exchanges": ["Nasdaq" for _ in listed],
                      "filings": {"recent": recent, "files": []}})

    def _archive(self, route: str) -> Response:
        parts = route.removeprefix("/Archives/edgar/data/").split("/", 2)
        cik = int(parts[0]) if parts[0].isdigit() else 0
        for filing in FILINGS.get(cik, []):
            if [filing.accession.replace("-", ""), filing.document] == parts[1:]:
                return 200, "text/html", filing.html.encode()
        return _not_found(route)

    def _wikidata_api(self, query: dict[str, list[str]]) -> Response:
        action = query.get("action", [""])[0]
        if action == "wbsearchentities":
            text = query.get("search", [""])[0]
            hits = [{"id": q, "title": q, "pageid": int(q[1:]) + 100,
                     "concepturi": f"http://www.wikidata.org/entity/{q}",
                     "repository": "wikidata", "url": f"//www.wikidata.org/wiki/{q}",
                     "display": {"label": {"value": WIKIDATA[q].label, "language": "en"}}
                     if q in WIKIDATA else {},
                     "label": WIKIDATA[q].label if q in WIKIDATA else q,
                     "match": {"type": "label", "language": "en", "text": text}}
                    for q in WIKIDATA_SEARCH.get(text, [])]
            return _json({"searchinfo": {"search": text}, "search": hits, "success": 1})
        if action == "wbgetentities":
            entities: JSONObject = {}
            for qid in query.get("ids", [""])[0].split("|"):
                item = WIKIDATA.get(qid)
                entities[qid] = {"id": qid, "missing": ""} if item is None else {
                    "type": "item", "id": qid,
                    "labels": {"en": {"language": "en", "value": item.label}},
                    "aliases": {"en": [{"language": "en", "value": a} for a in item.aliases]}
                    if item.aliases else {},
                }
            return _json({"entities": entities, "success": 1})
        return _json({"error": {"code": "badvalue", "info": f"unknown action {action!r}"}})

    def _entity(self, qid: str) -> Response:
        if qid in WIKIDATA_BROKEN:
            return 500, "text/html", b"<html><body>Wikimedia Error</body></html>"
        item = WIKIDATA.get(qid)
        if item is None:
            return _not_found(qid)
        return _json({"entities": {qid: {
            "pageid": int(qid[1:]) + 100, "ns": 0, "title": qid, "lastrevid": 2_000_000_000,
            "modified": "2026-06-30T12:00:00Z", "type": "item", "id": qid,
            "labels": {"en": {"language": "en", "value": item.label}},
            "descriptions": {}, "aliases": {}, "claims": item.claims, "sitelinks": {},
        }}})

    def _gleif(self, query: dict[str, list[str]]) -> Response:
        name = query.get("filter[entity.legalName]", [""])[0]
        records = [{
            "type": "lei-records", "id": lei,
            "attributes": {
                "lei": lei,
                "entity": {"legalName": {"name": legal, "language": "en"}, "otherNames": [],
                           "jurisdiction": "US-DE", "category": "GENERAL",
                           "status": "ACTIVE"},
                "registration": {"status": "ISSUED", "initialRegistrationDate":
                                 "2014-03-01T00:00:00Z"},
            },
            "links": {"self": f"https://api.gleif.org/api/v1/lei-records/{lei}"},
        } for legal, lei in GLEIF.get(name.upper(), [])]
        total = len(records)
        return _json({
            "meta": {"goldenCopy": {"publishDate": "2026-07-02T08:00:00Z"},
                     "pagination": {"currentPage": 1, "perPage": 5, "from": 1 if total else 0,
                                    "to": total, "total": total, "lastPage": 1}},
            "links": {"first": "https://api.gleif.org/api/v1/lei-records?page[number]=1",
                      "last": "https://api.gleif.org/api/v1/lei-records?page[number]=1"},
            "data": records,
        })


class FakeFilingLLM(LoopbackServer):
    """An OpenAI-compatible chat server answering each filing prompt from ``replies``
    (looked up by the company title in the prompt); ``NO_DISTINCT_QUERY`` otherwise."""

    def __init__(self, replies: dict[str, str] | None = None) -> None:
        self.replies = LLM_REPLIES if replies is None else replies
        self.prompts: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        if not path.endswith("/chat/completions"):
            return _not_found(path)
        request = json.loads(body or b"{}")
        prompt = "\n".join(message_texts(request))
        with self._lock:
            self.prompts.append(prompt)
        company = next((line.removeprefix("Company: ").strip() for line in prompt.splitlines()
                        if line.startswith("Company: ")), "")
        content = self.replies.get(company, "NO_DISTINCT_QUERY")
        return _json(completion(
            content, model=request.get("model", LLM_MODEL), created=1_782_000_000,
            usage={"prompt_tokens": len(prompt) // 4, "completion_tokens": 12,
                   "total_tokens": len(prompt) // 4 + 12}))


# --- the sample gold file ----------------------------------------------------------------

async def no_wait(seconds: float) -> None:
    """A sleep that returns at once: rate limits and retry delays cost no time in tests."""


async def generate_sample(sources: FakeFinanceSources, llm_server: FakeFilingLLM, *,
                          tally: Any = None, **overrides: Any) -> list[FinanceRow]:
    """All three suites from the fakes with this world's tiers, ``NOW`` and ``SEED``."""
    from needle_lib.benches.finance.generate import Options, Tally, generate
    from needle_lib.benches.finance.sources import GleifClient, SecClient, WikidataClient
    from needle_lib.llm import make_async_chat_client
    from needle_lib.llm.roles import generation_model_config

    env = sources.env()
    config = generation_model_config(LLM_MODEL, environ={"NEEDLE_LLM_BASE_URL": llm_server.url})
    llm = make_async_chat_client(replace(config, api_key="fake-key"), sleep=no_wait)
    clients = (SecClient(env=env, sleep=no_wait), WikidataClient(env=env, sleep=no_wait),
               GleifClient(env=env, sleep=no_wait))
    settings = {"now": NOW, "seed": SEED, "max_companies": 12, "tiers": TIERS, **overrides}
    try:
        return await generate(Options(**settings), sec=clients[0], wikidata=clients[1],
                              gleif=clients[2], llm=llm, tally=tally or Tally(clients))
    finally:
        for client in clients:
            await client.aclose()
        await llm.aclose()


def main() -> None:
    import sys

    from needle_lib.benches.rows import write_rows

    out = sys.argv[1] if len(sys.argv) > 1 else "fixtures/gold/finance.sample.jsonl"
    with FakeFinanceSources() as sources, FakeFilingLLM() as llm:
        rows = asyncio.run(generate_sample(sources, llm))
    print(f"wrote {count_of(write_rows(rows, out), 'row')} to {Path(out)}")


if __name__ == "__main__":
    main()
