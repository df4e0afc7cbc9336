"""Single-quarter figures from SEC XBRL ``companyfacts`` (suite ``filings``).

A 10-Q reports each figure twice or more: the quarter itself, the fiscal year to date
(six or nine months), and the same periods a year earlier, all tagged with the filing's
fiscal year and period (``fy``, ``fp``). A query "q2 fiscal 2026 net income" has one right
answer, so only true quarter spans (70–110 days) count, and among the facts tagged with one
(fy, fp) the latest period end wins: the quarter the filing is about, not its comparative.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from needle_lib.benches.finance.fields import XBRL_FIELDS
from needle_lib.jsonio import JSON, JSONObject

QUARTER_PERIODS = frozenset({"Q1", "Q2", "Q3"})  # Q4 has no 10-Q: it is inside the 10-K
MIN_QUARTER_DAYS, MAX_QUARTER_DAYS = 70, 110


@dataclass(frozen=True)
class QuarterFact:
    field: str
    value: float
    fy: int
    fp: str
    start: str
    end: str
    accession: str

    @property
    def quarter(self) -> str:
        """As people type it: "q1 fiscal 2026"."""
        return f"{self.fp.lower()} fiscal {self.fy}"


def span_days(start: str, end: str) -> int | None:
    try:
        return (date.fromisoformat(end) - date.fromisoformat(start)).days
    except (TypeError, ValueError):
        return None


def _quarter_fact(field: str, raw: JSON) -> QuarterFact | None:
    if not isinstance(raw, dict) or raw.get("form") != "10-Q":
        return None
    fp = raw.get("fp")
    if not isinstance(fp, str) or fp not in QUARTER_PERIODS:
        return None
    fy, start, end, value = raw.get("fy"), raw.get("start"), raw.get("end"), raw.get("val")
    if not isinstance(fy, int) or not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    days = span_days(start, end)
    if days is None or not MIN_QUARTER_DAYS <= days <= MAX_QUARTER_DAYS:
        return None  # a year-to-date or annual value, or a broken period
    return QuarterFact(field, float(value), fy, fp, start, end, str(raw.get("accn", "")))


def quarter_facts(gaap: JSONObject, field: str, limit: int = 6) -> list[QuarterFact]:
    """The latest ``limit`` quarters of ``field``, newest first.

    The field's concepts are tried in order and the first that yields any quarter wins:
    companies move between concepts (``Revenues`` → ``RevenueFromContract…``) and mixing
    them would pair one period's figure with another concept's definition.
    """
    spec = XBRL_FIELDS[field]
    for concept in spec.concepts:
        entry = gaap.get(concept)
        units = entry.get("units") if isinstance(entry, dict) else None
        raws = units.get(spec.unit) if isinstance(units, dict) else None
        latest: dict[tuple[int, str], QuarterFact] = {}
        for raw in raws if isinstance(raws, list) else []:
            fact = _quarter_fact(field, raw)
            if fact is None:
                continue
            key = (fact.fy, fact.fp)
            if key not in latest or fact.end > latest[key].end:
                latest[key] = fact
        if latest:
            return sorted(latest.values(), key=lambda f: (f.end, f.fy, f.fp),
                          reverse=True)[:limit]
    return []
