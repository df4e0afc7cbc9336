"""Clients of the keyless public sources scholar gold comes from, and readers of their answers.

- ``ArxivApi``: listings, the Atom feed of ``/api/query`` on export.arxiv.org
  (``NEEDLE_ARXIV_BASE_URL``);
- ``ArxivHtml``: full texts, ``/html/<id>`` on arxiv.org itself, a different host from the
  API, hence its own override ``NEEDLE_ARXIV_HTML_BASE_URL``;
- ``EuropePmc``: listings (``/search``, JSON) and full texts (``/PMC<n>/fullTextXML``, JATS)
  under www.ebi.ac.uk/europepmc/webservices/rest (``NEEDLE_EUROPEPMC_BASE_URL``);
- ``NcbiIdConverter``: PMCID → PMID, ``/tools/idconv/api/v1/articles/`` on
  pmc.ncbi.nlm.nih.gov (``NEEDLE_NCBI_BASE_URL``).

Etiquette: arXiv's API terms ask for one request every 3 seconds over a single connection,
enforced by the client (``min_interval``), not by callers remembering to; arxiv.org pages
get one connection at one request a second. NCBI asks for ``tool`` and ``email`` on every
converter call and allows three requests a second without a key. Every source sends the
contact User-Agent when ``NEEDLE_CONTACT`` is set, and retries 4 times from 2 s (these
services answer 503 under load and recover in seconds).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from needle_lib.benches.scholar.bodies import html_body_text, jats_body_text
from needle_lib.benches.scholar.papers import (
    HEALTH_DOMAIN,
    Paper,
    coarse_domain,
    normalize_arxiv_id,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from needle_lib.jsonio import JSONObject
from needle_lib.net.payload import Body, member
from needle_lib.net.retry import RetryPolicy
from needle_lib.net.sources import CONTACT_ENV, SourceClient, SourceError

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
SCHOLAR_RETRY = RetryPolicy(attempts=4, base_delay=2.0)
IDCONV_BATCH = 100  # the converter takes up to 200 ids a call; 100 keeps URLs short

#: arXiv search expressions of the four arXiv domains (primary and cross-listed categories).
ARXIV_DOMAIN_QUERIES = {
    "computer science": "cat:cs.*",
    "physical sciences": ("(cat:physics.* OR cat:math.* OR cat:stat.* OR cat:cond-mat.* "
                          "OR cat:astro-ph.*)"),
    "life sciences": "cat:q-bio.*",
    "social sciences": "(cat:econ.* OR cat:q-fin.*)",
}
#: Europe PMC articles whose full text can be fetched: open access, full text, abstract.
EUROPEPMC_FILTER = 'OPEN_ACCESS:y AND HAS_FT:y AND HAS_ABSTRACT:y AND LANG:"eng"'
_TAG = re.compile(r"<[^>]+>")


class _ScholarSource(SourceClient):
    def __init__(self, *, retry: RetryPolicy | None = None, **kwargs: Any) -> None:
        super().__init__(retry=retry or SCHOLAR_RETRY, **kwargs)


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


def _moment(raw: str | None) -> datetime | None:
    """An ISO date or timestamp as an aware UTC datetime; None when absent or malformed."""
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _child_text(entry: Element, tag: str) -> str:
    child = entry.find(tag)
    return _flat("".join(child.itertext())) if child is not None else ""


def parse_arxiv_atom(text: str, *, url: str = "arxiv") -> list[Paper]:
    """The papers of an arXiv API Atom feed; entries lacking an id, title, abstract or date
    are skipped. An API error (an entry under ``/api/errors``) is a ``SourceError``."""
    try:
        root = SafeET.fromstring(text)
    except (ParseError, DefusedXmlException) as exc:
        raise SourceError("arxiv", url, f"not Atom XML: {exc}") from None
    papers = []
    for entry in root.findall(f"{ATOM}entry"):
        raw_id = _child_text(entry, f"{ATOM}id")
        if "/api/errors" in raw_id:
            raise SourceError("arxiv", url, f"API error: {_child_text(entry, f'{ATOM}summary')}")
        arxiv_id = normalize_arxiv_id(raw_id.rsplit("/abs/", 1)[-1])
        title = _child_text(entry, f"{ATOM}title")
        abstract = _child_text(entry, f"{ATOM}summary")
        published = _moment(_child_text(entry, f"{ATOM}published"))
        if not (arxiv_id and title and abstract and published):
            continue
        primary = entry.find(f"{ARXIV}primary_category")
        category = primary.get("term", "") if primary is not None else ""
        doi = _child_text(entry, f"{ARXIV}doi")
        authors = tuple(name for author in entry.findall(f"{ATOM}author")
                        if (name := _child_text(author, f"{ATOM}name")))
        papers.append(Paper(
            suite="arxiv", title=title, abstract=abstract, published=published,
            url=f"https://arxiv.org/abs/{arxiv_id}", domain=coarse_domain(category),
            arxiv=arxiv_id, doi=normalize_doi(doi) if doi else None, authors=authors))
    return papers


def _markup_free(text: str | None) -> str:
    """Europe PMC titles and abstracts carry HTML (``<i>``, ``<h4>Background</h4>``)."""
    return _flat(html.unescape(_TAG.sub(" ", text or "")))


def _epmc_authors(record: JSONObject, body: Body) -> tuple[str, ...]:
    listed = body.list(member(record, "authorList", "author"), "authorList.author",
                       optional=True)
    names = []
    for author in (a for a in listed if isinstance(a, dict)):
        full = body.text(member(author, "fullName"), "authorList.author[].fullName")
        names.append(_flat(full or " ".join(
            body.text(member(author, part), f"authorList.author[].{part}")
            for part in ("firstName", "lastName"))))
    if not names:
        listed_names = body.text(record.get("authorString"), "authorString")
        names = [_flat(n) for n in listed_names.rstrip(".").split(",")]
    return tuple(n for n in names if n)


def parse_europepmc_record(record: JSONObject, body: Body) -> Paper | None:
    """One ``resultList.result`` entry (``resultType=core``) as a paper; None without a
    title, abstract, first publication date or PMCID (no PMCID, no full text to read).
    A field of the wrong type is a ``SourceError`` naming it (``body``)."""
    def text(field: str) -> str:
        return body.text(record.get(field), f"resultList.result[].{field}")

    title = _markup_free(text("title"))
    abstract = _markup_free(text("abstractText"))
    published = _moment(text("firstPublicationDate"))
    pmcid = normalize_pmcid(text("pmcid"))
    if not (title and abstract and published and pmcid):
        return None
    raw_pmid, raw_doi = text("pmid"), text("doi")
    return Paper(
        suite="europepmc", title=title, abstract=abstract, published=published,
        url=f"https://europepmc.org/article/PMC/PMC{pmcid}", domain=HEALTH_DOMAIN,
        doi=normalize_doi(raw_doi) if raw_doi else None,
        pmid=normalize_pmid(raw_pmid) if raw_pmid else None, pmcid=pmcid,
        authors=_epmc_authors(record, body))


def _day(d: date, time: str) -> str:
    return f"{d:%Y%m%d}{time}"


class ArxivApi(_ScholarSource):
    source = "arxiv"
    default_base_url = "https://export.arxiv.org"
    min_interval = 3.0
    max_in_flight = 1

    async def listing(self, domain: str, *, first: date, last: date,
                      max_results: int) -> list[Paper]:
        """Papers of ``domain`` submitted from ``first`` to ``last`` (inclusive), newest first."""
        window = f"submittedDate:[{_day(first, '0000')} TO {_day(last, '2359')}]"
        params = {"search_query": f"{ARXIV_DOMAIN_QUERIES[domain]} AND {window}",
                  "sortBy": "submittedDate", "sortOrder": "descending", "start": 0,
                  "max_results": max_results}
        return parse_arxiv_atom(await self.get_text("/api/query", params=params),
                                url=self.url("/api/query"))


class ArxivHtml(_ScholarSource):
    """arxiv.org itself, not the API host: its own base URL, ``NEEDLE_ARXIV_HTML_BASE_URL``."""

    source = "arxiv-html"
    default_base_url = "https://arxiv.org"
    min_interval = 1.0
    max_in_flight = 1

    async def body(self, arxiv_id: str) -> str:
        """The running text of the paper's HTML rendering (``SourceError`` 404: none made)."""
        return html_body_text(await self.get_text(f"/html/{arxiv_id}"))


class EuropePmc(_ScholarSource):
    source = "europepmc"
    default_base_url = "https://www.ebi.ac.uk/europepmc/webservices/rest"
    min_interval = 0.1
    max_in_flight = 4

    async def listing(self, *, first: date, last: date, page_size: int) -> list[Paper]:
        """Open-access full-text articles first published from ``first`` to ``last``."""
        params = {"query": f"{EUROPEPMC_FILTER} AND FIRST_PDATE:[{first} TO {last}]",
                  "format": "json", "resultType": "core", "pageSize": page_size}
        payload = await self.get_json("/search", params=params)
        body = Body(self.source, self.url("/search"))
        results = body.list(member(payload, "resultList", "result"), "resultList.result")
        return [p for r in results
                if isinstance(r, dict) and (p := parse_europepmc_record(r, body))]

    async def body(self, pmcid: str) -> str:
        return jats_body_text(await self.get_text(f"/PMC{pmcid}/fullTextXML"))


class NcbiIdConverter(_ScholarSource):
    """PMCID → PMID through NCBI's converter, each PMCID asked once per client (cached)."""

    source = "ncbi"
    default_base_url = "https://pmc.ncbi.nlm.nih.gov"
    min_interval = 0.34
    max_in_flight = 1

    def __init__(self, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(env=env, **kwargs)
        self._contact = (os.environ if env is None else env).get(CONTACT_ENV, "").strip()
        self._cache: dict[str, str | None] = {}

    async def pmids(self, pmcids: list[str]) -> dict[str, str | None]:
        """``{pmcid: pmid or None}`` for the given PMCIDs (digits, without "PMC")."""
        wanted = list(dict.fromkeys(p for p in pmcids if p))
        missing = [p for p in wanted if p not in self._cache]
        for start in range(0, len(missing), IDCONV_BATCH):
            batch = missing[start:start + IDCONV_BATCH]
            params = {"ids": ",".join(f"PMC{p}" for p in batch), "format": "json",
                      "tool": "needle-evals"}
            if self._contact:
                params["email"] = self._contact
            path = "/tools/idconv/api/v1/articles/"
            payload = await self.get_json(path, params=params)
            body = Body(self.source, self.url(path))
            for record in body.list(member(payload, "records"), "records"):
                entry = body.object(record, "records[]")
                pmcid = normalize_pmcid(body.text(entry.get("pmcid"), "records[].pmcid"))
                if pmcid and entry.get("status") != "error":
                    pmid = body.text(entry.get("pmid"), "records[].pmid")
                    self._cache[pmcid] = normalize_pmid(pmid) if pmid else None
            for pmcid in batch:
                self._cache.setdefault(pmcid, None)
        return {p: self._cache[p] for p in wanted}
