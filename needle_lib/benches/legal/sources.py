"""Clients of the public sources legal gold comes from: CourtListener and the eCFR.

Each is a ``SourceClient`` (contact User-Agent, base-URL override, rate limit, the shared
retry policy) with typed methods that unwrap the documented response shapes:

- CourtListener's v4 search API (``/api/rest/v4/search/?type=o``): published opinions of one
  court filed in a date range, newest first, first page only. It needs an API token
  (``COURTLISTENER_API_TOKEN``, sent as ``Authorization: Token …``); a 401/403 is an error
  naming the variable, because every later request would fail the same way and an empty
  suite would look like a quiet month. The documented limit is 5,000 requests an hour, so
  requests start at most every 0.75 s, two in flight.
- The eCFR versioner API: ``titles.json`` (each title's latest issue date), the structure
  JSON of a title (walked for its sections, reserved nodes skipped) and a section's source
  XML, parsed with defusedxml: the XML comes off the network, and the stdlib parser would
  expand entity bombs.

Provenance URLs name the public hosts, never an override: a mirror is how we fetched, not
where the document lives.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from needle_lib.errors import NeedleError
from needle_lib.jsonio import JSON
from needle_lib.net.sources import SourceClient, SourceError
from needle_lib.redact import register_secret
from needle_lib.tomlconf import ConfigError

TOKEN_ENV = "COURTLISTENER_API_TOKEN"
COURTLISTENER_PUBLIC = "https://www.courtlistener.com"
ECFR_PUBLIC = "https://www.ecfr.gov"
SEARCH_PATH = "/api/rest/v4/search/"
SECTION_ID = re.compile(r"^\d+\.[\w.\-]+$")


class MissingToken(ConfigError):
    """CourtListener's search API answers only to a token, and none is set."""

    def __init__(self) -> None:
        super().__init__(
            f"CourtListener needs an API token: set {TOKEN_ENV} (free: create an account at "
            f"{COURTLISTENER_PUBLIC}/sign-in/ and copy the token from your profile's API page)"
        )


class TokenRejected(ConfigError):
    """CourtListener refused the token (HTTP 401/403)."""

    def __init__(self, status: int, url: str) -> None:
        super().__init__(
            f"CourtListener refused the request (HTTP {status}) at {url}: check "
            f"{TOKEN_ENV} (a valid token from your CourtListener profile's API page)"
        )
        self.status = status


@dataclass(frozen=True)
class Case:
    """One published opinion cluster from CourtListener's search results."""

    cluster_id: int
    court_id: str
    case_name: str
    date_filed: date
    docket: str
    citations: tuple[str, ...]
    absolute_url: str

    @property
    def url(self) -> str:
        return COURTLISTENER_PUBLIC + self.absolute_url if self.absolute_url else ""


def _field_text(value: JSON) -> str | None:
    """A record's text field, spaces collapsed; ``""`` if absent, None if not text (a
    number counts: ids come as either)."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return " ".join(str(value).split())


def parse_case(record: JSON) -> Case | None:
    """A search result as a ``Case``; None when it cannot be gold: not an object, no name,
    date, cluster or court, a field of the wrong type, or neither a docket number nor a
    citation to find it by."""
    if not isinstance(record, dict):
        return None
    fields = {key: _field_text(record.get(key)) for key in (
        "caseName", "court_id", "cluster_id", "dateFiled", "docketNumber", "absolute_url")}
    raw_cites = record.get("citation")
    cites = [_field_text(c) for c in raw_cites] if isinstance(raw_cites, list) else []
    texts = {key: value for key, value in fields.items() if value is not None}
    if len(texts) < len(fields) or None in cites:
        return None
    try:
        filed = date.fromisoformat(texts["dateFiled"][:10])
        cluster_id = int(texts["cluster_id"])
    except ValueError:
        return None
    name, court, docket = texts["caseName"], texts["court_id"], texts["docketNumber"]
    if not name or not court or cluster_id <= 0:
        return None
    citations = tuple(c for c in cites if c)
    if not docket and not citations:
        return None
    return Case(cluster_id, court, name, filed, docket, citations, texts["absolute_url"])


class CourtListenerClient(SourceClient):
    """CourtListener's v4 search API, token-authenticated."""

    source = "courtlistener"
    default_base_url = COURTLISTENER_PUBLIC
    min_interval = 0.75  # 5,000 requests an hour is the documented ceiling
    max_in_flight = 2
    timeout = 60.0

    def __init__(self, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(env=env, **kwargs)
        env = os.environ if env is None else env
        self._token = env.get(TOKEN_ENV, "").strip()
        if not self._token:
            raise MissingToken()
        register_secret(self._token)

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "Authorization": f"Token {self._token}",
                "Accept": "application/json"}

    async def opinions(self, court: str, *, filed_after: date, filed_before: date
                       ) -> tuple[list[Case], int]:
        """Published opinions of ``court`` filed in [after, before] (both inclusive), newest
        first, deduplicated by cluster; also how many records were unusable as gold."""
        params = {
            "type": "o",
            "court": court,
            "filed_after": filed_after.strftime("%m/%d/%Y"),
            "filed_before": filed_before.strftime("%m/%d/%Y"),
            "order_by": "dateFiled desc",
            "stat_Precedential": "on",
        }
        try:
            payload = await self.get_json(SEARCH_PATH, params=params)
        except SourceError as exc:
            if exc.status in (401, 403):
                raise TokenRejected(exc.status, exc.url) from None
            raise
        records = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(records, list):
            raise SourceError(self.source, self.url(SEARCH_PATH),
                              "expected an object with a 'results' list")
        cases: list[Case] = []
        seen: set[int] = set()
        unusable = 0
        for record in records:
            case = parse_case(record)
            if case is None:
                unusable += 1
            elif case.cluster_id not in seen:
                seen.add(case.cluster_id)
                cases.append(case)
        return cases, unusable


@dataclass(frozen=True)
class SectionRef:
    """A section found in a title's structure: where it is and what it is called."""

    title: int
    part: str
    identifier: str
    label: str

    @property
    def citation(self) -> str:
        return f"{self.title} CFR {self.identifier}"

    @property
    def url(self) -> str:
        return f"{ECFR_PUBLIC}/current/title-{self.title}/section-{self.identifier}"


@dataclass(frozen=True)
class Section:
    ref: SectionRef
    text: str

    @property
    def heading(self) -> str:
        return self.ref.label


def walk_sections(node: JSON, title: int, part: str = "") -> list[SectionRef]:
    """Every section below ``node`` in document order, skipping reserved nodes (and all they
    contain), sections outside a part, unlabelled ones, and identifiers that are not
    ``<part>.<n>`` (appendices, ranges)."""
    if not isinstance(node, dict) or node.get("reserved"):
        return []
    kind = node.get("type")
    identifier = _field_text(node.get("identifier")) or ""
    if kind == "part":
        part = identifier
    if kind == "section":
        label = _field_text(node.get("label_description"))
        if part and label and SECTION_ID.match(identifier):
            return [SectionRef(title, part, identifier, label)]
        return []
    children = node.get("children")
    found: list[SectionRef] = []
    for child in children if isinstance(children, list) else []:
        found.extend(walk_sections(child, title, part))
    return found


def _text(element: Element) -> str:
    return " ".join("".join(element.itertext()).split())


class SectionXMLError(NeedleError, ValueError):
    """A section's XML that is malformed, unsafe, or does not hold the section."""


def parse_section_xml(xml: str, ref: SectionRef) -> Section:
    """The section's text (its ``<P>`` paragraphs joined) from the versioner's XML, which
    wraps the section (``DIV8 TYPE="SECTION" N="<id>"``) in its part, next to the part's
    authority and source notes (not part of the section)."""
    try:
        root = SafeET.fromstring(xml)
    except (ParseError, DefusedXmlException) as exc:
        raise SectionXMLError(f"{ref.citation}: unusable XML: {exc}") from None
    candidates = [el for el in root.iter() if el.get("TYPE") == "SECTION"]
    element = next((el for el in candidates if el.get("N") == ref.identifier), None)
    if element is None:
        raise SectionXMLError(f"{ref.citation}: the XML holds no section {ref.identifier}")
    paragraphs = [t for t in (_text(p) for p in element.iter("P")) if t]
    return Section(ref, " ".join(paragraphs))


class EcfrClient(SourceClient):
    """The eCFR versioner API: title dates, title structure, section XML."""

    source = "ecfr"
    default_base_url = ECFR_PUBLIC
    min_interval = 0.6  # no published limit; about 100 requests a minute is polite
    max_in_flight = 4
    timeout = 120.0  # a large title's structure JSON runs to megabytes

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._issue_dates: dict[int, str] | None = None

    async def issue_dates(self) -> dict[int, str]:
        """Each non-reserved title's latest date (``up_to_date_as_of``), fetched once."""
        if self._issue_dates is None:
            path = "/api/versioner/v1/titles.json"
            payload = await self.get_json(path)
            titles = payload.get("titles") if isinstance(payload, dict) else None
            if not isinstance(titles, list):
                raise SourceError(self.source, self.url(path),
                                  "expected an object with a 'titles' list")
            dates = {}
            for entry in titles:
                if not isinstance(entry, dict) or entry.get("reserved"):
                    continue
                number, day = entry.get("number"), entry.get("up_to_date_as_of")
                if isinstance(number, int) and day:
                    dates[number] = str(day)
            self._issue_dates = dates
        return self._issue_dates

    async def sections(self, title: int, issue_date: str) -> list[SectionRef]:
        path = f"/api/versioner/v1/structure/{issue_date}/title-{title}.json"
        payload = await self.get_json(path)
        if not isinstance(payload, dict):
            raise SourceError(self.source, self.url(path), "expected a structure object")
        return walk_sections(payload, title)

    async def section(self, ref: SectionRef, issue_date: str) -> Section:
        """``SourceError`` for a failed fetch, ``SectionXMLError`` for unusable XML."""
        xml = await self.get_text(f"/api/versioner/v1/full/{issue_date}/title-{ref.title}.xml",
                                  params={"part": ref.part, "section": ref.identifier})
        return parse_section_xml(xml, ref)
