"""Does a search result identify the gold case or regulation? Deterministic id matching.

A legal document is known by identifiers, not by wording, so a result counts when its URL or
its ``title + snippet`` (the snippet capped at ``--snippet-chars``) carries one of the gold's:

- a CourtListener opinion URL with the gold cluster id (``courtlistener.com/opinion/<id>/``);
- a reporter citation of the case ("89 F.4th 1188", "143 S. Ct. 2028", "2019 IL 123456"),
  in the text or as a Justia Supreme Court URL
  (``supreme.justia.com/cases/federal/us/<vol>/<page>/``), normalised to
  ``vol:reporter:page`` (``89:f4th:1188``), so "5 people in 2024" is never a citation. With
  the ``legal`` extra (``uv sync --extra legal``), Free Law Project's ``eyecite`` finds the
  citations and ``reporters-db`` names the reporter (every federal and state reporter, their
  variant spellings — "F. 4th", "Fed. Appx." — and neutral citations); without it, a
  bundled allow-list of the common reporters. Short forms ("89 F.4th at 1190") and "Id."
  never count: their page is a pin cite, not the case's first page;
- a CFR citation ("17 CFR 240.10b-5", "17 C.F.R. § 240.10b-5") or a Cornell LII / eCFR
  section URL, normalised to ``title:section`` (``17:240.10b-5``);
- the docket number ("No. 25-2462", Justia appellate URLs), but only when a party token of
  the case also appears: docket numbers restart every year in every court, so a bare
  "25-2462" names hundreds of cases.

Why some rules are stricter than a plain regex: a reporter volume and page must stand alone
("123 L. Ed. 2d 456" is ``123:led2d:456``, not page 2), a Justia URL's last segment must be
a page and not a docket ("us/601/22-451/" is docket 22-451, not page 22), and a date such as
2024-05-12 is never a docket. Federal Circuit dockets written with the full year
("2023-1101") match their short form ("23-1101").
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from types import ModuleType

from needle_lib.benches.known_item import Match
from needle_lib.errors import GoldError
from needle_lib.jsonio import JSON, JSONObject

#: Without eyecite: reporters whose citations identify a case (lowercase alphanumerics).
REPORTERS = frozenset({
    "us", "sct", "led", "led2d", "f", "f2d", "f3d", "f4th", "fsupp", "fsupp2d", "fsupp3d", "fappx",
    "wl", "br", "fedcl", "a", "a2d", "a3d", "p", "p2d", "p3d", "ne", "ne2d", "ne3d", "nw", "nw2d",
    "nw3d", "so", "so2d", "so3d", "se", "se2d", "se3d", "sw", "sw2d", "sw3d", "cal", "cal2d",
    "cal3d", "cal4th", "cal5th", "calrptr", "calrptr2d", "calrptr3d", "nys", "nys2d", "nys3d",
    "ad2d", "ad3d",
})
#: Other spellings of the same reporter.
_REPORTER_ALIASES = {"fedappx": "fappx", "lawyersed": "led", "lawyersed2d": "led2d"}

_CLUSTER_URL = re.compile(r"courtlistener\.com/opinion/(\d+)(?=[/?#]|$)", re.I)
_JUSTIA_US = re.compile(r"supreme\.justia\.com/cases/federal/us/(\d{1,4})/(\d{1,5})(?=[/?#]|$)",
                        re.I)
_ORDINAL = r"\d(?:d|th|st|nd|rd)\b\.?"
# Overlapping (a lookahead), so a false start cannot swallow the volume of a real citation.
_CITE = re.compile(
    r"(?<![\w.])(?=(\d{1,4})\s+"
    rf"([a-z][\w.'’]*(?:\s+(?:[a-z][\w.'’]*|{_ORDINAL})){{0,3}}?)"
    r"\s+(\d{1,7})(?!\w))",
    re.I,
)
_GOLD_CITE = re.compile(r"^\s*(\d{1,4})\s+(.+?)\s+(\d{1,7})\s*$")
_DOCKET = re.compile(
    r"(?<![\w\-–])(?:19|20)?(\d{2})\s?[-–]\s?(\d{1,5})(?!\d|\s?[-–]\s?\d)"
    r"|(?<![\w\-–])(\d{2})a(\d{1,4})(?!\w)",
    re.I,
)
_SECTION = r"(\d+\.[\w.\-]+)"
_CFR_TEXT = re.compile(
    rf"(?<!\d)(\d{{1,2}})\s*C\.?\s?F\.?\s?R\.?\s*(?:parts?\s*)?(?:§+\s*)?{_SECTION}", re.I)
_CFR_URLS = (
    re.compile(rf"law\.cornell\.edu/cfr/text/(\d{{1,2}})/{_SECTION}", re.I),
    re.compile(rf"title-(\d{{1,2}})/(?:[^\s?#]*/)?section-{_SECTION}", re.I),
)


@cache
def _eyecite() -> ModuleType | None:
    """eyecite when the ``legal`` extra is installed, else None (the bundled table)."""
    try:
        return importlib.import_module("eyecite")
    except ImportError:
        return None


def reporter_key(raw: str) -> str:
    """"F. App'x" → ``fappx``: lowercase alphanumerics, aliases folded."""
    key = re.sub(r"[^a-z0-9]", "", raw.lower())
    return _REPORTER_ALIASES.get(key, key)


@lru_cache(maxsize=8192)  # the same snippet reaches the matcher once per gold, per engine
def reporter_citations(text: str) -> frozenset[str]:
    """Every full reporter citation in ``text`` as ``vol:reporter:page``."""
    eyecite = _eyecite()
    if not text.strip():
        return frozenset()
    if eyecite is None:
        return frozenset(f"{int(v)}:{reporter_key(r)}:{int(p)}" for v, r, p in _CITE.findall(text)
                         if reporter_key(r) in REPORTERS)
    full = importlib.import_module("eyecite.models").FullCaseCitation
    keys = set()
    for cite in eyecite.get_citations(text):
        volume = cite.groups.get("volume") or ""
        page = _page(cite.groups.get("page") or "")
        if isinstance(cite, full) and volume.isdigit() and page:
            keys.add(f"{int(volume)}:{reporter_key(cite.corrected_reporter())}:{page}")
    return frozenset(keys)


def _page(raw: str) -> str | None:
    """A first page as a key: digits (zeros dropped) with a neutral citation's suffix kept
    ("120583-U", "189A"); None for what names no case (a blank "___", front-matter roman
    numerals, "¶" paragraphs)."""
    m = re.fullmatch(r"(\d{1,7})(-?[a-z]{1,2})?", raw.strip().lower())
    return f"{int(m.group(1))}{m.group(2) or ''}" if m else None


def citation_key(raw: str) -> str | None:
    """A gold citation ("89 F.4th 1188") as ``vol:reporter:page``, normalised as results'
    citations are; None if it is not one."""
    found = reporter_citations(raw)
    if len(found) == 1:
        return next(iter(found))
    m = _GOLD_CITE.match(raw)  # a reporter neither source knows: its spelling, folded
    if not m:
        return None
    reporter = reporter_key(m.group(2))
    return f"{int(m.group(1))}:{reporter}:{int(m.group(3))}" if reporter else None


def _docket_key(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return f"{m.group(1)}-{int(m.group(2))}"
    return f"{m.group(3)}a{int(m.group(4))}"


def docket_keys(text: str) -> set[str]:
    """Docket numbers in ``text``: ``NN-N`` (years shortened, zeros dropped) or ``NNaN``."""
    return {_docket_key(m) for m in _DOCKET.finditer(text)}


def cfr_key(title: str | int, section: str) -> str:
    return f"{int(title)}:{section.rstrip('.').lower()}"


@dataclass(frozen=True)
class FoundIds:
    """The identifiers one result carries."""

    clusters: frozenset[str] = frozenset()
    cites: frozenset[str] = frozenset()
    dockets: frozenset[str] = frozenset()
    cfr: frozenset[str] = frozenset()

    def describe(self) -> str:
        parts = [f"{name} {', '.join(sorted(values))}" for name, values in (
            ("cluster", self.clusters), ("cites", self.cites), ("docket", self.dockets),
            ("cfr", self.cfr)) if values]
        return "; ".join(parts) if parts else "no case or CFR ids"


def extract_ids(*, text: str, url: str) -> FoundIds:
    """Every identifier in a result: ``text`` is its title and capped snippet."""
    cites = set(reporter_citations(text))
    cites |= {f"{int(v)}:us:{int(p)}" for v, p in _JUSTIA_US.findall(url)}
    cfr = {cfr_key(t, s) for t, s in _CFR_TEXT.findall(text)}
    for pattern in _CFR_URLS:
        cfr |= {cfr_key(t, s) for t, s in pattern.findall(url)}
    return FoundIds(
        clusters=frozenset(_CLUSTER_URL.findall(url)),
        cites=frozenset(cites),
        dockets=frozenset(docket_keys(f"{text} {url}")),
        cfr=frozenset(cfr),
    )


def _strings(ids: JSONObject, key: str) -> tuple[str, ...]:
    value = ids.get(key)
    if value in (None, ""):
        return ()
    if isinstance(value, str | int) and not isinstance(value, bool):
        return (str(value),)
    if isinstance(value, list):
        items = [v for v in value if isinstance(v, str | int) and not isinstance(v, bool)]
        if len(items) == len(value):
            return tuple(str(v) for v in items if str(v).strip())
    raise GoldError(f"gold {key!r} must be a string or a list of strings")


@dataclass(frozen=True)
class LegalGold:
    """What identifies one case or CFR section (NEEDLE's ``gold`` for legal rows)."""

    case_key: str
    cluster: str = ""
    docket: str = ""
    cites: tuple[str, ...] = ()
    cfr: str = ""
    party_tokens: tuple[str, ...] = ()
    court: str = ""
    label: str = ""
    cite_keys: frozenset[str] = field(default=frozenset(), compare=False)
    dockets: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def from_row(cls, gold: JSON) -> LegalGold:
        """A row's ``gold`` (``generate.CaseGold``/``CodeGold``, or NEEDLE's), checked: the
        file may come from anywhere."""
        if not isinstance(gold, dict):
            raise GoldError("'gold' must be an object with 'ids'")
        ids = gold.get("ids")
        if not isinstance(ids, dict) or not ids:
            raise GoldError("gold 'ids' must be a non-empty object "
                                 "(cluster, docket, cites or cfr)")
        cluster, docket, cfr = (next(iter(_strings(ids, k)), "")
                                for k in ("cluster", "docket", "cfr"))
        cites = _strings(ids, "cites")
        if not (cluster or docket or cites or cfr):
            raise GoldError("gold 'ids' has none of cluster, docket, cites, cfr")
        raw_tokens = gold.get("party_tokens") or []
        tokens = [t for t in raw_tokens if isinstance(t, str)] \
            if isinstance(raw_tokens, list) else []
        if not isinstance(raw_tokens, list) or len(tokens) < len(raw_tokens):
            raise GoldError("gold 'party_tokens' must be a list of strings")
        label = str(gold.get("case_name") or gold.get("citation") or "")
        return cls(
            case_key=str(gold.get("case_key") or cluster or cfr or docket),
            cluster=cluster, docket=docket, cites=cites, cfr=cfr.lower(),
            party_tokens=tuple(t.strip() for t in tokens if t.strip()),
            court=str(gold.get("court") or ""), label=label,
            cite_keys=frozenset(k for k in map(citation_key, cites) if k),
            dockets=frozenset(docket_keys(docket)),
        )

    def describe(self) -> str:
        ids = [f"{name} {value}" for name, value in (
            ("cluster", self.cluster), ("cites", ", ".join(self.cites)), ("cfr", self.cfr))
            if value]
        if self.docket:
            with_party = (f" with a party token ({', '.join(self.party_tokens)})"
                          if self.party_tokens else " (no party tokens: cannot match alone)")
            ids.append(f"docket {self.docket}{with_party}")
        court = f" ({self.court})" if self.court else ""
        return f"{self.label or self.case_key}{court}: {'; '.join(ids)}"


def party_in(tokens: Iterable[str], text: str) -> str | None:
    """The first party token found in ``text`` as a whole word (any case), or None."""
    for token in tokens:
        if re.search(rf"(?<![a-z0-9]){re.escape(token)}(?![a-z0-9])", text, re.I):
            return token
    return None


def match_result(gold: LegalGold, *, title: str, snippet: str, url: str) -> Match:
    """Whether one result names ``gold``, and why (not): the ids it found, in words."""
    text = f"{title} {snippet}".strip()
    found = extract_ids(text=text, url=url)
    if gold.cluster and gold.cluster in found.clusters:
        return Match(True, f"CourtListener cluster {gold.cluster}")
    shared = sorted(gold.cite_keys & found.cites)
    if shared:
        return Match(True, f"citation {shared[0]}")
    if gold.cfr and gold.cfr in found.cfr:
        return Match(True, f"CFR {gold.cfr}")
    dockets = sorted(gold.dockets & found.dockets)
    if dockets:
        party = party_in(gold.party_tokens, f"{text} {url}")
        if party:
            return Match(True, f"docket {dockets[0]} with party {party!r}")
        return Match(False, f"docket {dockets[0]} but no party token "
                            f"({', '.join(gold.party_tokens) or 'none known'}); found "
                            f"{found.describe()}")
    return Match(False, f"found {found.describe()}")
