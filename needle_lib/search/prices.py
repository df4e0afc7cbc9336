"""What an engine costs: US dollars per 1,000 queries, with where the figure came from.

Why a source and a date travel with every price: vendors change prices and plans often, a
price without its page and day cannot be checked or refreshed, and a buyer comparing
engines must be able to see how old a figure is. An engine without a known price has
``None``, shown as "unknown" on every page, never as 0 (a free engine is priced 0.0 with
the page that says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from needle_lib.tomlconf import ConfigError, TOMLTable

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: The keys an engine file or a site config sets a price with (all three, or none).
PRICE_KEYS = ("price_per_1k", "price_source", "price_date")


@dataclass(frozen=True)
class Price:
    """USD per 1,000 queries at the request shape the benchmarks send (top 5–10 results,
    no page contents), as stated by ``source`` on ``as_of``."""

    per_1k: float
    source: str
    as_of: str


def price_of(values: TOMLTable, where: Path | str, section: str = "") -> Price | None:
    """The price in a TOML table (``price_per_1k``, ``price_source``, ``price_date``), or
    None when it sets none of them; a partial or malformed price names the file and key."""
    given = [key for key in PRICE_KEYS if key in values]
    if not given:
        return None
    place = f"{where}: " + (f"[{section}] " if section else "")
    missing = [key for key in PRICE_KEYS if key not in values]
    if missing:
        raise ConfigError(f"{place}a price needs {', '.join(PRICE_KEYS)}; missing "
                          f"{', '.join(missing)}")
    per_1k, source, when = (values[key] for key in PRICE_KEYS)
    if isinstance(per_1k, bool) or not isinstance(per_1k, int | float) or per_1k < 0:
        raise ConfigError(f"{place}key 'price_per_1k' must be a number of US dollars >= 0, "
                          f"got {per_1k!r}")
    if not isinstance(source, str) or not source.strip():
        raise ConfigError(f"{place}key 'price_source' must name the page the price is from")
    if isinstance(when, date):  # a bare TOML date
        when = when.isoformat()
    if not isinstance(when, str) or not DATE.match(when):
        raise ConfigError(f"{place}key 'price_date' must be a YYYY-MM-DD date, got {when!r}")
    return Price(float(per_1k), source.strip(), when)


#: Prices of the built-in engines, read from the vendors' pages on the date given. Engines
#: left out had no published per-query price we could read; they show as unknown.
BUILT_IN_PRICES: dict[str, Price] = {
    "exa": Price(5.0, "https://exa.ai/pricing (search, 1–25 results; as listed by "
                      "modeldb.axiom.co/api/v1/providers/exa)", "2026-12-01"),
    "tavily": Price(8.0, "https://docs.tavily.com/documentation/api-credits (basic search = "
                         "1 credit, pay-as-you-go $0.008 per credit)", "2026-12-01"),
    "you": Price(5.0, "https://docs.you.com/administration/billing (Search API, $5.00 per "
                      "1,000 calls)", "2026-12-01"),
    "perplexity": Price(5.0, "Perplexity Search API, $5.00 per 1,000 requests (as quoted in "
                             "https://you.com/resources/tavily-vs-perplexity-api)",
                        "2026-12-01"),
}
