"""What a scholar paper is: its ids in one canonical form, its domain and its age.

Ids are normalised once, here, for both sides of the comparison (gold written at generation,
ids found in search results at scoring), so "arXiv:2401.01234v2", "2401.01234" and
"https://arxiv.org/abs/2401.01234" are one paper, and "PMC123" and "123" one PMC article.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

#: The id kinds a gold paper may carry, in the order reports list them. ``pmcid`` is ours:
#: PubMed Central links are matched directly instead of through NCBI's converter at scoring
#: time, so the matcher stays offline and deterministic.
ID_KINDS = ("arxiv", "doi", "pmid", "pmcid")

ARXIV_DOMAINS = ("computer science", "physical sciences", "life sciences", "social sciences")
HEALTH_DOMAIN = "health sciences"
DOMAINS = (*ARXIV_DOMAINS, HEALTH_DOMAIN)

#: Age buckets, freshest first: (oldest, newest) days before now that each one samples.
AGE_BANDS: dict[str, tuple[int, int]] = {
    "7d": (7, 0),
    "30d": (29, 8),
    "1y": (364, 31),
    "older": (1800, 366),
}
AGE_BUCKETS = tuple(AGE_BANDS)
_AGE_LIMITS = (("7d", 7), ("30d", 30), ("1y", 365))

_ARXIV_CATEGORY_DOMAIN = {
    "cs": "computer science",
    "q-bio": "life sciences",
    "econ": "social sciences",
    "q-fin": "social sciences",
}
#: arXiv ids: new style (2401.01234) and old style (hep-th/9901001, math.GT/0309136).
ARXIV_ID = r"(?:\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[a-z]{2})?/\d{7})"
_ARXIV_ID = re.compile(rf"^(?:arxiv:)?({ARXIV_ID})(?:v\d+)?$", re.I)
_OLD_STYLE_CLASS = re.compile(r"^([a-z-]+)\.[a-z]{2}/", re.I)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi.org/", "doi:")


def normalize_arxiv_id(raw: str) -> str | None:
    """``arXiv:2401.01234v2`` → ``2401.01234``; ``math.GT/0309136`` → ``math/0309136``."""
    found = _ARXIV_ID.match(raw.strip())
    if not found:
        return None
    return _OLD_STYLE_CLASS.sub(r"\1/", found.group(1).lower())


def normalize_doi(raw: str) -> str | None:
    """Lowercased, without a resolver prefix (``https://doi.org/``, ``doi:``)."""
    doi = raw.strip().lower()
    for prefix in _DOI_PREFIXES:
        if doi.startswith(prefix):
            doi = doi[len(prefix):].strip()
    return doi if _DOI.match(doi) else None


def normalize_pmid(raw: str | int) -> str | None:
    return _digits(str(raw).strip())


def normalize_pmcid(raw: str | int) -> str | None:
    """``PMC1234567`` and ``1234567`` → ``1234567`` (the digits: one form for both)."""
    return _digits(str(raw).strip().upper().removeprefix("PMC"))


def _digits(text: str) -> str | None:
    if not text.isdigit():
        return None
    return text.lstrip("0") or None


NORMALIZERS = {
    "arxiv": normalize_arxiv_id,
    "doi": normalize_doi,
    "pmid": normalize_pmid,
    "pmcid": normalize_pmcid,
}


def coarse_domain(category: str) -> str:
    """The domain of an arXiv primary category (``cs.CL`` → computer science)."""
    prefix = category.split(".", 1)[0].lower()
    return _ARXIV_CATEGORY_DOMAIN.get(prefix, "physical sciences")


def age_bucket(published: datetime, now: datetime) -> str:
    """The bucket of a paper's age in whole days (≤ 7 → 7d, ≤ 30 → 30d, ≤ 365 → 1y)."""
    days = (now - published).days
    return next((name for name, limit in _AGE_LIMITS if days <= limit), "older")


@dataclass(frozen=True)
class Paper:
    """One candidate paper as a listing describes it (ids already normalised)."""

    suite: str
    title: str
    abstract: str
    published: datetime
    url: str
    domain: str
    arxiv: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    authors: tuple[str, ...] = field(default=())

    @property
    def ids(self) -> dict[str, str]:
        """The gold ids: every id this paper has, in ``ID_KINDS`` order."""
        values = {"arxiv": self.arxiv, "doi": self.doi, "pmid": self.pmid, "pmcid": self.pmcid}
        return {kind: value for kind, value in values.items() if value}

    @property
    def key(self) -> str:
        """One stable key per paper (dedupe across cells and listings)."""
        return self.arxiv or self.doi or self.pmid or self.url
