"""Does a search result state the finance gold answer? Deterministic, one rule per field type.

The evidence is what a user sees without clicking: ``title + " " + snippet`` (the snippet
capped at the run's ``--snippet-chars``) and the result URL. Each rule is as loose as a
reader would be and no looser:

- person: the name, or a nickname form where the given name stands ("Tim Cook" for
  "Timothy Donald Cook", "Bill Gates" for "William Henry Gates"; the ``nicknames`` table);
- entity: the name with legal suffixes ignored ("Apple" for "Apple Inc.");
- year: the year as a number in the text;
- country: every name of the gold's country, however the gold names it ("USA" gold, "the
  United States" text); long names in any case, but short forms (US, UK, U.S.) only in
  their own case, so "trust us" is not the United States;
- domain: the registrable domain of the URL, or the domain written in the text;
- exact_id: tickers as a case-sensitive token ("AAPL", not "aapl"); long ids (LEI, accession
  numbers) anywhere in the text or URL once punctuation is dropped (EDGAR URLs carry them);
- money: any amount within 2 % ($18.78 billion for 18,775,000,000), signs and accounting
  parentheses respected, bare years never taken for amounts;
- numeric_band (head counts): within 15 %.

Low-entropy fields (years, head counts, tickers) also need a cue word ("founded",
"employees"…) in the text: a bare "1976" on a company page says nothing about founding.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TypeAlias
from urllib.parse import urlsplit

from nicknames import NickNamer

from needle_lib.benches.finance.countries import country_forms
from needle_lib.benches.finance.fields import FIELD_TYPES, LEGAL_SUFFIXES, field_spec
from needle_lib.benches.known_item import Match
from needle_lib.errors import GoldError
from needle_lib.jsonio import JSON
from needle_lib.net.domains import registrable_domain

MONEY_TOLERANCE = 0.02
BAND_TOLERANCE = 0.15

_PUNCT = str.maketrans({c: " " for c in string.punctuation})
_ARTICLES = frozenset({"a", "an", "the"})
_YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2})\b")
_SCALES = {
    "trillion": 1e12, "tn": 1e12, "t": 1e12,
    "billion": 1e9, "bn": 1e9, "b": 1e9,
    "million": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6,
    "thousand": 1e3, "k": 1e3,
}
_AMOUNT = re.compile(
    r"(?P<open>\()?\s*"
    r"(?P<sign>(?<![\d.])[-−–])?\s*"
    r"(?P<cur>[$€£¥])?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<scale>trillion|billion|million|thousand|tn|bn|mn|mm|t|b|m|k)(?![a-z]))?"
    r"(?P<trail>-(?!\d))?"
    r"\s*(?P<close>\))?",
    re.IGNORECASE,
)

#: Alias words too generic to stand for a country on their own.
_VAGUE_COUNTRY_FORMS = frozenset({"state", "states", "union", "republic", "kingdom"})


#: A gold value or alias: a name, a year or count, an amount.
Form: TypeAlias = str | int | float


def _form(value: JSON, what: str) -> Form:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise GoldError(f"gold {what} must be a string or a number, got {value!r}")
    return value


@dataclass(frozen=True)
class FinanceGold:
    field: str
    field_type: str
    value: Form
    aliases: tuple[Form, ...] = ()
    freshness_window: str = ""
    tier: str = ""

    @property
    def forms(self) -> list[Form]:
        return [f for f in (self.value, *self.aliases) if f != ""]

    @classmethod
    def from_row(cls, gold: JSON) -> FinanceGold:
        """A row's ``gold`` (``generate.FinanceGoldRecord``, or NEEDLE's), checked: the file
        may come from anywhere."""
        if not isinstance(gold, dict):
            raise GoldError("'gold' must be an object with field, field_type and value")
        missing = [k for k in ("field", "field_type", "value") if gold.get(k) in (None, "")]
        if missing:
            raise GoldError(f"gold has no {', '.join(missing)}")
        field_type = gold["field_type"]
        if not isinstance(field_type, str) or field_type not in FIELD_TYPES:
            raise GoldError(f"unknown field_type {field_type!r}; known: "
                            f"{', '.join(sorted(FIELD_TYPES))}")
        aliases = gold.get("aliases") or []
        if not isinstance(aliases, list):
            raise GoldError("gold 'aliases' must be a list")
        return cls(str(gold["field"]), field_type, _form(gold["value"], "'value'"),
                   tuple(_form(a, "alias") for a in aliases if a is not None),
                   str(gold.get("freshness_window") or ""), str(gold.get("tier") or ""))

    def describe(self) -> str:
        aliases = f" (aliases: {', '.join(map(str, self.aliases))})" if self.aliases else ""
        return f"{self.field} = {self.value}{aliases}"


#: How one field type finds its gold in a result (title + snippet, its norm, the URL): the
#: evidence found, or None.
FieldMatcher: TypeAlias = Callable[[FinanceGold, str, str, str], "str | None"]


def squad_norm(text: str) -> str:
    """NFKC, lowercase, ASCII punctuation to spaces, articles dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCT)
    return " ".join(t for t in text.split() if t not in _ARTICLES)


def phrase_in(phrase: str, text: str) -> bool:
    return bool(phrase) and f" {phrase} " in f" {text} "


def _cues(field: str) -> tuple[str, ...]:
    try:
        return field_spec(field).cues
    except KeyError:
        return ()


def match_result(gold: FinanceGold, *, title: str, snippet: str, url: str) -> Match:
    """Whether one result (title, capped snippet, URL) carries ``gold``, and why (not)."""
    text = f"{title} {snippet}".strip()
    norm = squad_norm(text)
    cues = _cues(gold.field)
    if cues and not any(phrase_in(squad_norm(cue), norm) for cue in cues):
        return Match(False, f"no cue word ({', '.join(cues)}) for {gold.field}")
    matcher = _MATCHERS[gold.field_type]
    found = matcher(gold, text, norm, url)
    if found:
        return Match(True, f"{gold.field_type} {found!r}")
    return Match(False, f"{gold.field_type} {gold.value!r} not in title, snippet or URL")


def _person(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    tokens = norm.split()
    for form in gold.forms:
        name = squad_norm(str(form))
        if phrase_in(name, norm):
            return str(form)
        parts = name.split()
        if len(parts) < 2 or len(parts[0]) < 3:
            continue
        given, surname = parts[0], parts[-1]
        for i, token in enumerate(tokens):
            if token != surname:
                continue
            for before in tokens[max(0, i - 3):i]:
                if len(before) >= 3 and same_given_name(given, before):
                    return f"{before} {surname}"
    return None


@cache
def _nicknamer() -> NickNamer:
    return NickNamer()


def same_given_name(given: str, written: str) -> bool:
    """Whether ``written`` (before the surname) stands for the gold's given name: one is a
    prefix of the other (NEEDLE's rule: "Tim" for "Timothy"), or the ``nicknames`` table
    relates them ("Bill" for "William", "Peggy" for "Margaret")."""
    if given.startswith(written) or written.startswith(given):
        return True
    names = _nicknamer()
    return written in names.nicknames_of(given) or given in names.nicknames_of(written)


def _strip_legal(norm: str) -> str:
    return " ".join(t for t in norm.split() if t not in LEGAL_SUFFIXES)


def _entity(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    bare = _strip_legal(norm)
    for form in gold.forms:
        name = _strip_legal(squad_norm(str(form)))
        variants = [name]
        if " " not in name and len(name) > 3:
            variants.append(name[:-1] if name.endswith("s") else f"{name}s")
        if any(phrase_in(v, bare) for v in variants):
            return str(form)
    return None


def _year(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    wanted = {int(f) for f in gold.forms if str(f).strip().lstrip("+-").isdigit()}
    for found in _YEAR.findall(text):
        if int(found) in wanted:
            return found
    return None


def _country_forms(gold: FinanceGold) -> list[str]:
    """The gold's own forms, then every form of each country they name (see ``countries``)."""
    forms = [str(f) for f in gold.forms]
    for form in list(forms):
        forms.extend(f for f in country_forms(form) if f not in forms)
    return forms


def _is_short(form: str) -> bool:
    return len(form.replace(".", "").replace(" ", "")) <= 3


def _country(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    for form in _country_forms(gold):
        if _is_short(form):
            pattern = rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])"
            if re.search(pattern, text):
                return form
        elif squad_norm(form) not in _VAGUE_COUNTRY_FORMS and phrase_in(squad_norm(form), norm):
            return form
    return None


#: A host name written in text ("apple.com", "www.apple.com", "investor.apple.com").
_HOST = re.compile(r"(?<![a-z0-9.-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,})(?![a-z0-9-])")


def _domain(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    """Gold and evidence both reduced to registrable domains, so gold written as
    ``www.apple.com`` or ``https://www.apple.com/`` matches "apple.com" in a snippet."""
    wanted = {_site(str(f)) for f in gold.forms if "." in str(f)} - {""}
    if url and _site(url) in wanted:
        return _site(url)
    for host in _HOST.findall(text.lower()):
        if _site(host) in wanted:
            return str(host)
    return None


def _site(url: str) -> str:
    """A URL's or host's registrable domain, else its host without ``www.`` (a site that is
    itself a public suffix, like ``www.gov.uk``)."""
    text = url.strip().lower()
    host = urlsplit(text if "://" in text else f"//{text}").hostname or ""
    return registrable_domain(host) or host.removeprefix("www.")


def _id_form(form: Form) -> str:
    return re.sub(r"[\s.\-]", "", str(form)).upper()


def _exact_id(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
    haystack = re.sub(r"[^A-Z0-9]", "", f"{text} {url}".upper())
    for form in gold.forms:
        ident = _id_form(form)
        if len(ident) < 2:
            continue
        if len(ident) <= 6:
            for raw in {str(form).strip(), ident}:
                if re.search(rf"(?<![A-Za-z0-9]){re.escape(raw)}(?![A-Za-z0-9])", text):
                    return raw
        elif ident in haystack:
            return str(form)
    return None


def amounts(text: str) -> list[float]:
    """Every money-like amount in ``text``, signed and scaled; bare years are skipped."""
    found = []
    for m in _AMOUNT.finditer(text):
        number = float(m["num"].replace(",", ""))
        scale = (m["scale"] or "").lower()
        currency = m["cur"]
        signed = bool(m["sign"] or m["trail"])
        if not (currency or scale or signed) and "." not in m["num"] and "," not in m["num"] \
                and 1500 <= number <= 2099:
            continue
        value = number * _SCALES.get(scale, 1.0)
        negative = signed or (m["open"] and m["close"] and (currency or scale))
        found.append(-value if negative else value)
    return found


def _gold_numbers(form: Form) -> list[float]:
    """A gold amount: a number, or text read as result text is ("$130.5 billion")."""
    if isinstance(form, int | float):
        return [float(form)]
    try:
        return [float(str(form))]
    except ValueError:
        return amounts(str(form))[:1]


def _within(tolerance: float) -> FieldMatcher:
    def close(gold: FinanceGold, text: str, norm: str, url: str) -> str | None:
        targets = [target for form in gold.forms for target in _gold_numbers(form)]
        for amount in amounts(text):
            for target in targets:
                near = (abs(amount) < 1 if target == 0
                        else abs(amount - target) / abs(target) <= tolerance)
                if near:
                    return f"{amount:g}"
        return None

    return close


_MATCHERS: dict[str, FieldMatcher] = {
    "person": _person,
    "entity": _entity,
    "year": _year,
    "country": _country,
    "domain": _domain,
    "exact_id": _exact_id,
    "money": _within(MONEY_TOLERANCE),
    "numeric_band": _within(BAND_TOLERANCE),
}
assert set(_MATCHERS) == FIELD_TYPES
