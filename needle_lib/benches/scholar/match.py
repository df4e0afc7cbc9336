"""Does a search result point at the gold paper? Deterministic: the paper's ids, found or not.

A result is the paper when one of the gold ids appears in its URL or in what a user sees
without clicking (``title + " " + snippet``, the snippet capped at ``--snippet-chars``):

- arXiv ids in ``arxiv.org/abs|pdf|html/…`` URLs, ``arXiv:`` mentions and arXiv DOIs
  (``10.48550/arXiv.…``), versions dropped (v2 of a paper is the paper);
- DOIs anywhere, with what publishers append to them in URLs stripped (``/full``, ``/pdf``,
  ``.pdf``, bioRxiv's ``v2.full``…) and URL escapes undone;
- PMIDs in PubMed and Europe PMC ``MED`` URLs and as ``PMID: …`` in the text;
- PubMed Central ids in PMC and Europe PMC URLs and as ``PMC…`` in the text. They match the
  gold's ``pmcid`` directly: NEEDLE maps them to PMIDs through NCBI's converter at run time,
  we record the PMCID at generation instead, so scoring needs no network. A row NEEDLE made
  (a PMID, no PMCID) therefore cannot match a PMC link; such a miss says so
  (``ScholarGold.pmc_blind``), so it is never mistaken for the engine's.

Titles are never matched by wording: a near-identical title can be another paper (a
preprint of a different version, a comment, a reply), and ids cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from needle_lib.benches.known_item import Match
from needle_lib.benches.scholar.papers import (
    ARXIV_ID,
    ID_KINDS,
    NORMALIZERS,
    normalize_arxiv_id,
    normalize_pmcid,
)
from needle_lib.errors import GoldError
from needle_lib.jsonio import JSON

_NOT_AN_ID_DIGIT = r"(?![\d])"
_ARXIV_PATTERNS = (
    re.compile(rf"arxiv\.org/(?:abs|pdf|html|format)/({ARXIV_ID})(?:v\d+)?{_NOT_AN_ID_DIGIT}",
               re.I),
    re.compile(rf"\barxiv[:\s]+({ARXIV_ID})(?:v\d+)?{_NOT_AN_ID_DIGIT}", re.I),
    re.compile(rf"10\.48550/arxiv\.({ARXIV_ID})(?:v\d+)?{_NOT_AN_ID_DIGIT}", re.I),
)
_DOI = re.compile(r"\b(10\.\d{4,9}/[-._;()/:a-z0-9]+)", re.I)
#: What publishers append to a DOI in their URLs (``…/10.3389/x.2024.1/full``).
_DOI_PATH_SUFFIX = re.compile(
    r"/(?:full|fulltext|pdf|epdf|pdfdirect|html|meta|abstract|summary|citation|citations"
    r"|references|figures|tables|suppl_file|supplementary|download|view)$", re.I)
_DOI_FILE_SUFFIX = re.compile(r"\.(?:pdf|full|html|abstract|supplementary-material)$", re.I)
_BIORXIV_VERSION = re.compile(r"^(10\.1101/[\d.]+)v\d+$")
_PMID_URLS = (
    re.compile(r"pubmed\.ncbi\.nlm\.nih\.gov/(\d{1,9})\b", re.I),
    re.compile(r"ncbi\.nlm\.nih\.gov/pubmed/(\d{1,9})\b", re.I),
    re.compile(r"europepmc\.org/(?:article|abstract)/med/(\d{1,9})\b", re.I),
)
_PMID_TEXT = re.compile(r"\bPMID\s*[:#]?\s*(\d{1,9})\b", re.I)
_PMC_URLS = (
    re.compile(r"(?:pmc\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pmc)/articles?/pmc(\d+)\b",
               re.I),
    re.compile(r"europepmc\.org/(?:article|abstract)/pmc/pmc(\d+)\b", re.I),
    re.compile(r"europepmc\.org/articles/pmc(\d+)\b", re.I),
)
_PMC_TEXT = re.compile(r"\bPMC(\d{4,9})\b")


@dataclass(frozen=True)
class ScholarGold:
    """The paper to find: its ids by kind (normalised), and what reports group it by."""

    ids: dict[str, str]
    paper_key: str = ""
    age_bucket: str = ""
    domain: str = ""
    published_date: str = ""

    @classmethod
    def from_row(cls, gold: JSON) -> ScholarGold:
        """A row's ``gold`` (``generate.ScholarGoldRecord``, or NEEDLE's), checked: the
        file may come from anywhere."""
        if not isinstance(gold, dict):
            raise GoldError("'gold' must be an object with 'ids'")
        raw_ids = gold.get("ids")
        if not isinstance(raw_ids, dict) or not raw_ids:
            raise GoldError("gold 'ids' must be a non-empty object "
                            f"(keys among {', '.join(ID_KINDS)})")
        ids: dict[str, str] = {}
        for kind, value in raw_ids.items():
            if kind not in NORMALIZERS:
                raise GoldError(f"gold id kind {kind!r} is unknown; known: {', '.join(ID_KINDS)}")
            if value in (None, ""):
                continue
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise GoldError(f"gold id {kind} must be a string, got {value!r}")
            normal = NORMALIZERS[kind](str(value))
            if normal is None:
                raise GoldError(f"gold id {kind} {value!r} is not a valid {kind}")
            ids[kind] = normal
        if not ids:
            raise GoldError("gold 'ids' has no usable id")
        return cls({k: ids[k] for k in ID_KINDS if k in ids},
                   str(gold.get("paper_key") or ""), str(gold.get("age_bucket") or ""),
                   str(gold.get("domain") or ""), str(gold.get("published_date") or ""))

    def describe(self) -> str:
        return ", ".join(f"{kind} {value}" for kind, value in self.ids.items())

    @property
    def pmc_blind(self) -> bool:
        """A PubMed paper without its PMCID (NEEDLE's files): PMC links cannot match it."""
        return "pmid" in self.ids and "pmcid" not in self.ids


def _arxiv_ids(sources: tuple[str, ...]) -> set[str]:
    found = set()
    for pattern in _ARXIV_PATTERNS:
        for source in sources:
            for hit in pattern.finditer(source):
                normal = normalize_arxiv_id(hit.group(1))
                if normal:
                    found.add(normal)
    return found


def _balanced_tail(doi: str) -> str:
    """Drop trailing punctuation that ends the sentence around a DOI, not the DOI itself:
    ``.``/``,``/``;`` always, ``)`` only when it closes nothing inside the DOI."""
    while doi:
        unclosed = doi[-1] == ")" and doi.count(")") > doi.count("(")
        if doi[-1] in ".,;:" or unclosed:
            doi = doi[:-1]
        else:
            return doi
    return doi


def clean_doi(raw: str) -> str:
    """A DOI as found in a URL or text, without sentence punctuation or publisher suffixes."""
    doi = _balanced_tail(raw)
    while True:
        stripped = _balanced_tail(_DOI_FILE_SUFFIX.sub("", _DOI_PATH_SUFFIX.sub("", doi)))
        if stripped == doi:
            break
        doi = stripped
    doi = doi.lower()
    versioned = _BIORXIV_VERSION.match(doi)
    return versioned.group(1) if versioned else doi


def _dois(sources: tuple[str, ...]) -> set[str]:
    return {clean_doi(hit.group(1)) for source in sources for hit in _DOI.finditer(source)}


def _pmids(url: str, text: str) -> set[str]:
    found = {hit.group(1) for pattern in _PMID_URLS for hit in pattern.finditer(url)}
    found |= {hit.group(1) for hit in _PMID_TEXT.finditer(text)}
    return {pmid.lstrip("0") for pmid in found if pmid.lstrip("0")}


def _pmcids(url: str, text: str) -> set[str]:
    found = {hit.group(1) for pattern in _PMC_URLS for hit in pattern.finditer(url)}
    found |= {hit.group(1) for hit in _PMC_TEXT.finditer(text)}
    return {normal for raw in found if (normal := normalize_pmcid(raw))}


def extract_ids(*, url: str, title: str, snippet: str) -> dict[str, set[str]]:
    """Every paper id in one result, by kind (empty kinds left out)."""
    url = unquote(url or "")
    text = f"{title} {snippet}".strip()
    both = (url, text)
    found = {
        "arxiv": _arxiv_ids(both),
        "doi": _dois(both),
        "pmid": _pmids(url, text),
        "pmcid": _pmcids(url, text),
    }
    return {kind: ids for kind, ids in found.items() if ids}


def _listing(found: dict[str, set[str]]) -> str:
    return "; ".join(f"{kind} {', '.join(sorted(ids))}" for kind, ids in found.items())


def match_result(gold: ScholarGold, *, title: str, snippet: str, url: str) -> Match:
    """Whether one result carries one of the gold ids, and which ids it carried."""
    found = extract_ids(url=url, title=title, snippet=snippet)
    for kind, value in gold.ids.items():
        if value in found.get(kind, ()):
            return Match(True, f"{kind} {value}")
    if not found:
        return Match(False, "no paper id in URL, title or snippet")
    if gold.pmc_blind and "pmcid" in found:
        return Match(False, f"PMC link ({_listing(found)}) not comparable: the gold has a PMID "
                            "but no pmcid (a NEEDLE-made row)")
    return Match(False, f"other paper ids: {_listing(found)}")
