"""Facts read from Wikidata claims (the ``claims`` object of Special:EntityData).

Wikidata keeps history: a company has every CEO it ever had, head counts for many years,
and statements editors marked wrong. Gold must be the *current* truth, so:

- a deprecated statement is never used (editors flagged it as wrong);
- for single-valued facts (founded, country, website, LEI) the best rank wins: preferred
  statements if any, else normal ones, in the order Wikidata lists them;
- the CEO is a P169 statement without an end time (P582), preferred over normal, then the
  latest start (P580);
- the head count is the one with the latest point in time (P585), and the caller decides
  whether that is recent enough to ask about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from needle_lib.jsonio import JSON, JSONObject

#: P31 classes that make a search hit a company: business, enterprise, company, public
#: company, (a Q18388277 class the reference uses), organization, multinational corporation.
COMPANY_CLASSES = frozenset({
    "Q4830453", "Q6881511", "Q783794", "Q891723", "Q18388277", "Q43229", "Q161726",
})
#: Properties only companies carry: LEI, stock exchange, ticker symbol.
COMPANY_PROPERTIES = ("P1278", "P414", "P249")

INSTANCE_OF, CEO, FOUNDED, COUNTRY, HEADQUARTERS = "P31", "P169", "P571", "P17", "P159"
WEBSITE, EMPLOYEES, LEI = "P856", "P1128", "P1278"
START, END, POINT_IN_TIME = "P580", "P582", "P585"

_YEAR = re.compile(r"^([+-]?)(\d+)-")
_LEI = re.compile(r"^[0-9A-Z]{18}[0-9]{2}$")

Claims = JSONObject
Statement = JSONObject


@dataclass(frozen=True)
class Ceo:
    qid: str
    since: int | None


def _statements(claims: Claims, pid: str) -> list[Statement]:
    found = claims.get(pid)
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def _live(claims: Claims, pid: str) -> list[Statement]:
    return [s for s in _statements(claims, pid) if s.get("rank") != "deprecated"]


def best_statements(claims: Claims, pid: str) -> list[Statement]:
    """Preferred statements if there are any, else normal ones; never deprecated ones."""
    live = _live(claims, pid)
    preferred = [s for s in live if s.get("rank") == "preferred"]
    return preferred or live


def _value(snak: JSON) -> JSON:
    if not isinstance(snak, dict) or snak.get("snaktype", "value") != "value":
        return None  # "somevalue" / "novalue" snaks carry no datavalue
    datavalue = snak.get("datavalue")
    return datavalue.get("value") if isinstance(datavalue, dict) else None


def _main(statement: Statement) -> JSON:
    return _value(statement.get("mainsnak"))


def entity_id(statement: Statement) -> str | None:
    value = _main(statement)
    qid = value.get("id") if isinstance(value, dict) else None
    return qid if isinstance(qid, str) and qid else None


def _string(statement: Statement) -> str | None:
    value = _main(statement)
    return value.strip() if isinstance(value, str) and value.strip() else None


def year_of(value: JSON) -> int | None:
    """The year of a Wikidata time value (``{"time": "+1976-04-01T00:00:00Z", ...}``);
    None for BCE dates and unknown values."""
    time = value.get("time") if isinstance(value, dict) else None
    match = _YEAR.match(time) if isinstance(time, str) else None
    if not match or match.group(1) == "-":
        return None
    year = int(match.group(2))
    return year or None


def _qualifier_year(statement: Statement, pid: str) -> int | None:
    qualifiers = statement.get("qualifiers")
    snaks = qualifiers.get(pid) if isinstance(qualifiers, dict) else None
    for snak in snaks if isinstance(snaks, list) else []:
        year = year_of(_value(snak))
        if year:
            return year
    return None


def _has_qualifier(statement: Statement, pid: str) -> bool:
    qualifiers = statement.get("qualifiers")
    return isinstance(qualifiers, dict) and bool(qualifiers.get(pid))


def is_company(claims: Claims) -> bool:
    """Whether an entity is a company: a company class, or a property only companies have."""
    classes = {entity_id(s) for s in _statements(claims, INSTANCE_OF)}
    return bool(classes & COMPANY_CLASSES) or any(claims.get(p) for p in COMPANY_PROPERTIES)


def current_ceo(claims: Claims) -> Ceo | None:
    """The sitting CEO: no end time (an ended term, even with an unknown end date, is
    over), preferred rank first, then the latest start year; the id breaks exact ties."""
    ranked = []
    for statement in _live(claims, CEO):
        qid = entity_id(statement)
        if qid is None or _has_qualifier(statement, END):
            continue
        since = _qualifier_year(statement, START)
        ranked.append((statement.get("rank") == "preferred", since or 0, qid, since))
    if not ranked:
        return None
    _, _, qid, since = max(ranked)
    return Ceo(qid, since)


def founded_year(claims: Claims) -> int | None:
    for statement in best_statements(claims, FOUNDED):
        year = year_of(_main(statement))
        if year:
            return year
    return None


def first_entity(claims: Claims, pid: str) -> str | None:
    """The first best-ranked item value of a property (a country, a location)."""
    return next(filter(None, map(entity_id, best_statements(claims, pid))), None)


def website(claims: Claims) -> str | None:
    return next(filter(None, map(_string, best_statements(claims, WEBSITE))), None)


def lei(claims: Claims) -> str | None:
    """The LEI (ISO 17442: 18 alphanumerics and 2 check digits); malformed values ignored."""
    for statement in best_statements(claims, LEI):
        value = _string(statement)
        if value and _LEI.match(value.upper()):
            return value.upper()
    return None


def employees(claims: Claims) -> tuple[int, int | None] | None:
    """``(count, year)`` of the head count with the latest point in time (the later
    statement wins a tie); ``year`` is None when no statement is dated."""
    best: tuple[int, int | None] | None = None
    best_year = -1
    for statement in _live(claims, EMPLOYEES):
        value = _main(statement)
        try:
            count = int(Decimal(str(value["amount"]))) if isinstance(value, dict) else None
        except (KeyError, InvalidOperation, ValueError):
            count = None
        if count is None or count <= 0:
            continue
        year = _qualifier_year(statement, POINT_IN_TIME)
        if (year or 0) >= best_year:
            best, best_year = (count, year), year or 0
    return best
