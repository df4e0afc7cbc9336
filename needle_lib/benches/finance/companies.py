"""Which companies gold is generated for.

SEC's ``company_tickers.json`` lists companies roughly by market value, largest first. The
registry suite takes the head of that list (well-known companies have the richest Wikidata
entries). The filing suites draw from three cap tiers instead, because engines find
mega-cap filings easily and mid-cap ones far less so: a benchmark of mega caps only would
flatter every engine. Draws are seeded permutations, so a seed names one selection.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from needle_lib.benches.finance.sources import Company
from needle_lib.errors import NeedleError


@dataclass(frozen=True)
class Tier:
    name: str
    start: int  # positions in company_tickers.json order, end exclusive
    end: int


TIERS = (Tier("mega", 0, 100), Tier("large", 100, 500), Tier("mid", 500, 2500))
#: At least one of these must be among the first 100 rows, or the list is not ordered by
#: market value any more and the tiers would mean nothing.
MEGA_CAP_TICKERS = frozenset({"AAPL", "MSFT", "NVDA", "GOOG", "GOOGL", "AMZN"})


class CompanyOrderError(NeedleError, ValueError):
    """company_tickers.json no longer looks ordered by market value."""


def permutation(n: int, seed: int) -> list[int]:
    """A seeded permutation of ``range(n)`` (same seed, same order, on every platform)."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def distinct_companies(companies: Sequence[Company], limit: int) -> list[Company]:
    """The first ``limit`` companies with distinct titles (share classes list a company
    once per ticker: GOOGL and GOOG are one company)."""
    seen: set[str] = set()
    chosen = []
    for company in companies:
        key = company.title.strip().lower()
        if key not in seen:
            seen.add(key)
            chosen.append(company)
            if len(chosen) >= limit:
                break
    return chosen


def check_market_cap_order(companies: Sequence[Company]) -> None:
    head = TIERS[0].end
    if len(companies) > head and not MEGA_CAP_TICKERS & {c.ticker for c in companies[:head]}:
        raise CompanyOrderError(
            f"none of {', '.join(sorted(MEGA_CAP_TICKERS))} is among the first {head} rows of "
            "company_tickers.json: the list no longer looks ordered by market value, so cap "
            "tiers cannot be drawn from it"
        )


def tiered_companies(companies: Sequence[Company], per_tier: int, seed: int,
                     tiers: Sequence[Tier] = TIERS) -> list[Company]:
    """``per_tier`` companies drawn from each tier (seeded), tagged with the tier's name.

    A company listed once per share class (same CIK) is drawn at its first listing only.
    """
    first: dict[int, int] = {}
    for position, company in enumerate(companies):
        first.setdefault(company.cik, position)
    chosen = []
    for tier in tiers:
        pool = [c for position, c in enumerate(companies[tier.start:tier.end], tier.start)
                if first[c.cik] == position]
        for index in permutation(len(pool), seed ^ tier.start)[:per_tier]:
            chosen.append(replace(pool[index], tier=tier.name))
    return chosen
