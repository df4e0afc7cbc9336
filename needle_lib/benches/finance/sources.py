"""Clients of the public registries finance gold comes from: SEC EDGAR, Wikidata, GLEIF.

Each is a ``SourceClient`` (contact User-Agent, base-URL override, rate limit, shared retry
policy) with typed methods that unwrap the documented response shapes and nothing more:
deciding what a claim or a fact *means* is left to ``claims``/``xbrl``/``generate``.

SEC serves from two hosts, www.sec.gov (``company_tickers.json``, filing documents) and
data.sec.gov (XBRL ``companyfacts``, ``submissions``). One ``SecClient`` talks to both, so
SEC's 10 requests/s fair-access limit is enforced across them together; each host has its own
override (``NEEDLE_SEC_BASE_URL``, ``NEEDLE_SEC_DATA_BASE_URL``).

Provenance URLs in gold rows always name the public hosts (``public_url``), never an
override: a mirror is how we fetched, not where the fact lives.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar

from needle_lib.benches.finance.fields import display_name
from needle_lib.jsonio import JSON, JSONObject
from needle_lib.net.payload import Body, member
from needle_lib.net.sources import SourceClient, SourceError


@dataclass(frozen=True)
class Company:
    """One row of SEC's ``company_tickers.json`` (plus its cap tier once tiers are drawn)."""

    cik: int
    ticker: str
    title: str
    tier: str = ""

    @property
    def name(self) -> str:
        """How people type it: "NVIDIA CORP" → "nvidia"."""
        return display_name(self.title)

    @property
    def search_title(self) -> str:
        """The title without SEC's state tags ("INC /DE/" → "INC"): what registries know."""
        return " ".join(token for token in self.title.split() if not token.startswith("/"))


@dataclass(frozen=True)
class Filing:
    """One entry of a company's recent EDGAR filings."""

    cik: int
    accession: str  # dashed, as EDGAR prints it: 0001045810-26-000050
    form: str
    filed: str  # YYYY-MM-DD
    primary_document: str

    @property
    def accession_digits(self) -> str:
        return self.accession.replace("-", "")

    @property
    def document_path(self) -> str:
        return f"/Archives/edgar/data/{self.cik}/{self.accession_digits}/{self.primary_document}"


@dataclass(frozen=True)
class Label:
    """An entity's English label and aliases (Wikidata)."""

    label: str
    aliases: tuple[str, ...] = ()


class SecClient(SourceClient):
    """SEC EDGAR: company list, XBRL company facts, submissions, filing documents."""

    source = "sec"
    default_base_url = "https://www.sec.gov"
    default_data_base_url = "https://data.sec.gov"
    data_base_url_env: ClassVar[str] = "NEEDLE_SEC_DATA_BASE_URL"
    min_interval = 0.1  # SEC fair access: at most 10 requests per second
    max_in_flight = 4
    contact_required = True  # SEC blocks clients without a declared contact
    timeout = 40.0
    override_hint = ("set NEEDLE_SEC_BASE_URL and NEEDLE_SEC_DATA_BASE_URL to a mirror or a "
                     "local fake (needle serve sources)")

    def __init__(self, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(env=env, **kwargs)
        env = os.environ if env is None else env
        self.data_base_url = (env.get(self.data_base_url_env, "").strip()
                              or self.default_data_base_url).rstrip("/")

    @classmethod
    def public_url(cls, path: str, *, data: bool = False) -> str:
        return (cls.default_data_base_url if data else cls.default_base_url) + path

    @staticmethod
    def facts_path(cik: int) -> str:
        return f"/api/xbrl/companyfacts/CIK{cik:010d}.json"

    @staticmethod
    def submissions_path(cik: int) -> str:
        return f"/submissions/CIK{cik:010d}.json"

    async def company_tickers(self) -> list[Company]:
        """Every listed company, in SEC's order (roughly by market value, largest first)."""
        path = "/files/company_tickers.json"
        payload = await self.get_json(path)
        if not isinstance(payload, dict):
            raise SourceError(self.source, self.url(path),
                              f"expected an object of companies, got {type(payload).__name__}")
        # The keys are row numbers; order by them so a re-serialised copy (sorted keys, where
        # "10" sorts before "2") still yields SEC's order.
        keys = sorted(payload, key=lambda key: int(key) if key.isdigit() else float("inf"))
        companies = []
        for key in keys:
            row = payload[key]
            if not isinstance(row, dict):
                continue
            ticker = str(row.get("ticker") or "").strip().upper()
            title = str(row.get("title") or "").strip()
            try:
                cik = int(str(row.get("cik_str")))
            except (TypeError, ValueError):
                continue
            if ticker and title:
                companies.append(Company(cik=cik, ticker=ticker, title=title))
        return companies

    async def company_facts(self, cik: int) -> JSONObject:
        """The ``us-gaap`` facts of a company; empty when it files no XBRL (SEC answers 404)."""
        try:
            payload = await self.get_json(self.data_base_url + self.facts_path(cik))
        except SourceError as exc:
            if exc.status == 404:
                return {}
            raise
        facts = payload.get("facts") if isinstance(payload, dict) else None
        gaap = facts.get("us-gaap") if isinstance(facts, dict) else None
        return gaap if isinstance(gaap, dict) else {}

    async def recent_filings(self, cik: int, forms: Iterable[str], limit: int = 20
                             ) -> list[Filing]:
        """The first ``limit`` filings of the given forms in ``filings.recent`` (newest first).

        Only the ``recent`` block is read (EDGAR's last ~1000 filings or a year), never the
        older paged files: the suite wants recent filings.
        """
        url = self.data_base_url + self.submissions_path(cik)
        try:
            payload = await self.get_json(url)
        except SourceError as exc:
            if exc.status == 404:
                return []
            raise
        body = Body(self.source, url)
        recent = body.object(member(payload, "filings", "recent"), "filings.recent",
                             optional=True)
        wanted = set(forms)
        columns = [body.list(recent.get(name), f"filings.recent.{name}", optional=True)
                   for name in ("accessionNumber", "form", "filingDate", "primaryDocument")]
        found = []
        for accession, form, filed, document in zip(*columns, strict=False):
            if form in wanted and accession and document and _is_date(filed):
                found.append(Filing(cik, str(accession), str(form), str(filed), str(document)))
                if len(found) >= limit:
                    break
        return found

    async def document(self, filing: Filing) -> str:
        """The primary document of a filing (HTML or text), as served."""
        return await self.get_text(filing.document_path)


class WikidataClient(SourceClient):
    """Wikidata: entity search, claims (Special:EntityData), English labels and aliases."""

    source = "wikidata"
    default_base_url = "https://www.wikidata.org"
    max_in_flight = 4
    contact_required = True  # Wikimedia's User-Agent policy asks for a way to reach you
    api_path: ClassVar[str] = "/w/api.php"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._claims: dict[str, JSONObject] = {}

    @classmethod
    def public_url(cls, qid: str) -> str:
        return f"{cls.default_base_url}/wiki/{qid}"

    async def search(self, text: str, limit: int = 5) -> list[str]:
        """Item ids matching ``text`` by label or alias, best first."""
        payload = await self.get_json(self.api_path, params={
            "action": "wbsearchentities", "search": text, "language": "en", "type": "item",
            "format": "json", "limit": limit,
        })
        body = Body(self.source, self.url(self.api_path))
        hits = body.list(member(payload, "search"), "search", optional=True)
        return [qid for hit in hits if (qid := body.text(member(hit, "id"), "search[].id"))]

    async def claims(self, qid: str) -> JSONObject:
        """An item's claims by property id (cached: locations and hits repeat across firms)."""
        if qid not in self._claims:
            path = f"/wiki/Special:EntityData/{qid}.json"
            payload = await self.get_json(path)
            body = Body(self.source, self.url(path))
            entities = body.object(member(payload, "entities"), "entities", optional=True)
            # A merged item redirects: the answer is keyed by the id it was merged into.
            entity = entities.get(qid) or (next(iter(entities.values()))
                                           if len(entities) == 1 else None)
            self._claims[qid] = body.object(member(entity, "claims"), f"entities.{qid}.claims",
                                            optional=True)
        return self._claims[qid]

    async def labels(self, qids: Iterable[str]) -> dict[str, Label]:
        """English label and aliases per id (ids without an English label are left out)."""
        ids = list(dict.fromkeys(q for q in qids if q))
        found: dict[str, Label] = {}
        for start in range(0, len(ids), 50):  # wbgetentities takes at most 50 ids per call
            payload = await self.get_json(self.api_path, params={
                "action": "wbgetentities", "ids": "|".join(ids[start:start + 50]),
                "props": "labels|aliases", "languages": "en", "format": "json",
            })
            body = Body(self.source, self.url(self.api_path))
            entities = body.object(member(payload, "entities"), "entities", optional=True)
            for qid, entity in entities.items():
                label = body.text(member(entity, "labels", "en", "value"),
                                  f"entities.{qid}.labels.en.value")
                listed = body.list(member(entity, "aliases", "en"), f"entities.{qid}.aliases.en",
                                   optional=True)
                aliases = tuple(alias for item in listed if (alias := body.text(
                    member(item, "value"), f"entities.{qid}.aliases.en[].value")))
                if label:
                    found[qid] = Label(label, aliases)
        return found


class GleifClient(SourceClient):
    """GLEIF's LEI records: the LEI of a legal entity looked up by its exact legal name."""

    source = "gleif"
    default_base_url = "https://api.gleif.org/api/v1"
    min_interval = 1.0  # GLEIF asks for at most 60 requests per minute
    max_in_flight = 2

    @classmethod
    def public_url(cls, lei: str) -> str:
        return f"{cls.default_base_url}/lei-records/{lei}"

    async def lei_by_legal_name(self, name: str) -> str | None:
        """The LEI whose legal name equals ``name`` (case and spacing aside), else None.

        The name filter also returns near matches ("Apple Inc. Pension Trust"); only an exact
        legal-name match is trusted as the company's own LEI.
        """
        payload = await self.get_json(
            "/lei-records",
            params={"filter[entity.legalName]": name, "page[size]": 5},
            headers={"Accept": "application/vnd.api+json"},
        )
        wanted = _name_key(name)
        body = Body(self.source, self.url("/lei-records"))
        for record in body.list(member(payload, "data"), "data", optional=True):
            legal = body.text(member(record, "attributes", "entity", "legalName", "name"),
                              "data[].attributes.entity.legalName.name")
            if legal and _name_key(legal) == wanted:
                lei = (body.text(member(record, "attributes", "lei"), "data[].attributes.lei")
                       or body.text(member(record, "id"), "data[].id"))
                return lei or None
        return None


def _is_date(text: JSON) -> bool:
    if not isinstance(text, str):
        return False
    try:
        date.fromisoformat(text)
    except (TypeError, ValueError):
        return False
    return True


def _name_key(name: str) -> str:
    return " ".join(name.lower().split())
