"""The finance gold fields: what each one is, how it is asked, and what text must surround it.

One table serves generation (templates, freshness) and matching (field type, cue words), so a
field cannot be generated with one meaning and scored with another.

Cue words exist for low-entropy answers: a bare year or head count appears on almost any
company page, so a result only counts when it also says *what* the number is ("founded
1976", "164,000 employees").
"""

from __future__ import annotations

from dataclasses import dataclass

FIELD_TYPES = frozenset(
    {"person", "entity", "year", "country", "domain", "exact_id", "money", "numeric_band"}
)

#: Legal-form tokens dropped from company names (display names, entity matching).
LEGAL_SUFFIXES = frozenset((
    "incorporated", "inc", "corporation", "corp", "company", "co", "limited", "ltd", "llc",
    "plc", "gmbh", "ag", "sa", "nv", "se", "spa", "kk", "pte", "pty", "bv", "oyj", "ab", "as",
    "lp", "holding", "holdings", "group", "the",
))

#: Freshness windows from most to least perishable (report breakdowns use this order).
FRESHNESS_LADDER = ("1h", "24h", "7d", "30d", "1y", "5y", "static")


@dataclass(frozen=True)
class FieldSpec:
    field: str
    field_type: str
    freshness: str
    keyword: str
    natural: str | None = None
    cues: tuple[str, ...] = ()


_FIELDS = (
    FieldSpec("ceo", "person", "1y", "{name} ceo", "who is the ceo of {name}"),
    FieldSpec("ceo_since", "year", "1y", "when did {ceo} become ceo of {name}",
              cues=("became", "become", "since", "appointed", "named", "succeeded",
                    "took over")),
    FieldSpec("ceo_company", "entity", "1y", "which company is {ceo} the ceo of",
              cues=("ceo", "chief executive")),
    FieldSpec("founded_year", "year", "static", "{name} founded year",
              "when was {name} founded",
              cues=("founded", "founding", "established", "incorporated", "began", "started",
                    "since")),
    FieldSpec("hq_country", "country", "static", "{name} headquarters country",
              "in which country is {name} headquartered"),
    FieldSpec("website", "domain", "static", "{name} official website",
              "what is the official website of {name}"),
    FieldSpec("employees", "numeric_band", "1y", "{name} number of employees",
              "how many people work at {name}",
              cues=("employee", "employees", "employs", "headcount", "workforce", "staff")),
    FieldSpec("lei", "exact_id", "static", "{name} lei code", "what is the lei code of {name}"),
    FieldSpec("ticker", "exact_id", "static", "{name} stock ticker symbol",
              "what is the stock ticker symbol of {name}",
              cues=("ticker", "symbol", "stock", "nasdaq", "nyse", "shares")),
)

#: Registry facts (suite ``finance``), in generation order.
REGISTRY_FIELDS: dict[str, FieldSpec] = {spec.field: spec for spec in _FIELDS}


@dataclass(frozen=True)
class XbrlField:
    """A single-quarter 10-Q fact (suite ``filings``): concepts tried in order, first wins."""

    field: str
    phrase: str
    concepts: tuple[str, ...]
    unit: str = "USD"
    #: Cue words for low-entropy amounts (a per-share figure is any small decimal).
    cues: tuple[str, ...] = ()


XBRL_FIELDS: dict[str, XbrlField] = {
    f.field: f
    for f in (
        XbrlField("revenue", "revenue", (
            "RevenueFromContractWithCustomerExcludingAssessedTax", "Revenues",
            "RevenueFromContractWithCustomerIncludingAssessedTax", "SalesRevenueNet")),
        XbrlField("net_income", "net income", ("NetIncomeLoss", "ProfitLoss")),
        XbrlField("operating_income", "operating income", ("OperatingIncomeLoss",)),
        XbrlField("eps_diluted", "diluted eps", ("EarningsPerShareDiluted",), unit="USD/shares",
                  cues=("eps", "per share", "earnings per", "per diluted share")),
    )
}
DEFAULT_XBRL_FIELDS = ("net_income", "operating_income", "eps_diluted")

#: A filing found by its accession number (suite ``filingdoc``).
FILING = FieldSpec("filing", "exact_id", "static", "")


def field_spec(field: str) -> FieldSpec:
    """The spec of any finance gold field (registry, XBRL or filing)."""
    if field in REGISTRY_FIELDS:
        return REGISTRY_FIELDS[field]
    if field in XBRL_FIELDS:
        return FieldSpec(field, "money", "1y", "", cues=XBRL_FIELDS[field].cues)
    if field == FILING.field:
        return FILING
    raise KeyError(field)


def display_name(title: str) -> str:
    """A company name as people type it: "JPMORGAN CHASE & CO" → "jpmorgan chase".

    Lowercased, tokens starting with "/" dropped (SEC's "INC /DE"), then trailing "&" and
    legal-form tokens removed repeatedly.
    """
    tokens = [t for t in title.lower().replace(",", " ").split() if not t.startswith("/")]
    while len(tokens) > 1 and (tokens[-1] == "&" or tokens[-1].strip(".") in LEGAL_SUFFIXES):
        tokens.pop()
    return " ".join(tokens)
