"""Caselaw queries: a case caption as a person would type it, plus the court.

"Fresh Mix, LLC v. Pisanelli Bice PLLC" (ca9) becomes ``fresh mix v pisanelli bice ninth
circuit``: party names lowercased, punctuation dropped, entity suffixes (LLC, Inc., …),
articles and bare numbers removed, since nobody types them and they only make a query
brittle. The party tokens kept for matching are the distinctive words (4+ letters, not
"united", "states", "commissioner", …): they confirm that a bare docket number in a result
is about this case.

About half the rows carry operator syntax, one cycle over the accepted cases:
plain, quoted, plain, site, plain, date. ``quoted`` quotes one party name that appears word
for word in the caption (the whole cleaned caption never does once suffixes are gone, and a
phrase no page contains measures nothing); a caption with no such party stays plain.
``site`` restricts to courtlistener.com; ``date`` brackets the filing date by 45 days.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta

COURT_PHRASES = {
    "scotus": "supreme court",
    "ca1": "first circuit", "ca2": "second circuit", "ca3": "third circuit",
    "ca4": "fourth circuit", "ca5": "fifth circuit", "ca6": "sixth circuit",
    "ca7": "seventh circuit", "ca8": "eighth circuit", "ca9": "ninth circuit",
    "ca10": "tenth circuit", "ca11": "eleventh circuit",
    "cadc": "dc circuit", "cafc": "federal circuit",
    "dcd": "district of columbia district court", "nysd": "southern district of new york",
    "cand": "northern district of california", "ilnd": "northern district of illinois",
}
#: The bench's courts: the Supreme Court and the thirteen courts of appeals.
DEFAULT_COURTS = ("scotus", "ca1", "ca2", "ca3", "ca4", "ca5", "ca6", "ca7", "ca8", "ca9",
                  "ca10", "ca11", "cadc", "cafc")
SYNTAX_CYCLE = ("plain", "quoted", "plain", "site", "plain", "date")
SITE = "courtlistener.com"
DATE_WINDOW = timedelta(days=45)
MIN_WORDS = 3
MIN_TOKEN_CHARS = 4

#: Words nobody types in a caption: entity forms, titles, articles, "et al.".
PARTY_SUFFIXES = frozenset({
    "inc", "corp", "llc", "llp", "lp", "plc", "pllc", "pc", "co", "company", "limited", "ltd",
    "corporation", "incorporated", "sa", "nv", "ag", "gmbh", "esquire", "esq", "attorney",
    "attorneys", "the", "a", "an", "et", "al", "dba", "aka", "fka",
})
#: Caption words that name no one in particular (never party tokens).
GENERIC_WORDS = frozenset({
    "united", "states", "america", "state", "people", "commonwealth", "city", "county", "town",
    "village", "borough", "district", "board", "department", "secretary", "administrator",
    "commissioner", "director", "attorney", "general", "government", "federal", "national",
    "office", "bureau", "agency", "commission", "committee", "re", "parte", "rel", "estate",
    "matter", "application", "petition",
})
_ANNOTATION = re.compile(r"\s+revisions?\s*:.*$", re.I | re.S)
_VERSUS = re.compile(r"\s+(?:v|vs)\.?\s+", re.I)
_NOT_NAME = re.compile(r"[^a-z0-9\s\-']")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _fold(text: str) -> str:
    """Accents dropped (José → jose), typographic quotes made plain, lowercased."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_QUOTES))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def clean_party(raw: str) -> str:
    """A party name as typed: no punctuation, suffixes, articles or bare numbers."""
    words = _NOT_NAME.sub(" ", _fold(raw)).split()
    return " ".join(w for w in words if re.search(r"[a-z]", w) and w.strip("-'")
                    not in PARTY_SUFFIXES)


def parties(case_name: str) -> list[str]:
    """The cleaned parties of a caption (one or two), empty ones left out."""
    head = _ANNOTATION.sub("", case_name).split(":", 1)[0]
    return [p for p in (clean_party(side) for side in _VERSUS.split(head, maxsplit=1)) if p]


def party_tokens(case_name: str) -> list[str]:
    """Distinctive party words (4+ characters, not generic), in order, once each."""
    tokens: list[str] = []
    for party in parties(case_name):
        for word in party.split():
            word = word.strip("-'")
            if len(word) >= MIN_TOKEN_CHARS and word not in GENERIC_WORDS \
                    and word not in tokens:
                tokens.append(word)
    return tokens


@dataclass(frozen=True)
class CaptionQuery:
    """The base query of a case and what the syntax forms need."""

    base: str
    court_phrase: str
    quotable: str | None  # a party name found word for word in the caption

    def with_syntax(self, syntax: str, filed: date) -> tuple[str, str]:
        """(query text, syntax actually applied) for a syntax of the cycle."""
        if syntax == "quoted":
            if self.quotable is None:
                return self.base, "plain"
            rest = self.base.replace(self.quotable, f'"{self.quotable}"', 1)
            return rest, "quoted"
        if syntax == "site":
            return f"{self.base} site:{SITE}", "site"
        if syntax == "date":
            return (f"{self.base} after:{(filed - DATE_WINDOW).isoformat()} "
                    f"before:{(filed + DATE_WINDOW).isoformat()}", "date")
        return self.base, "plain"


def caption_query(case_name: str, court: str) -> CaptionQuery | None:
    """``{party 1} v {party 2} {court phrase}``; None when too generic to find one case
    (fewer than three words, or no distinctive party word)."""
    sides = parties(case_name)
    phrase = COURT_PHRASES.get(court, "")
    if not sides or not party_tokens(case_name):
        return None
    base = " ".join([" v ".join(sides), phrase]).strip()
    if len(base.split()) < MIN_WORDS:
        return None
    flat = " ".join(_NOT_NAME.sub(" ", _fold(case_name)).split())
    quotable = next((p for p in sides if len(p.split()) >= 2 and f" {p} " in f" {flat} "
                     and any(len(w) >= MIN_TOKEN_CHARS and w not in GENERIC_WORDS
                             for w in p.split())), None)
    return CaptionQuery(base, phrase, quotable)
