"""The search site's own settings (``needle dashboard --site-config FILE``, TOML).

```toml
hub = "keenable-ai/keenbench-results"   # archive the run pages link to (optional)

[prices.keenable]                       # overrides the engine spec / engine file price
price_per_1k = 0.0
price_source = "https://keenable.ai/pricing"
price_date = "2026-11-30"
```

Why prices can be overridden here: a buyer's negotiated rate, or a vendor page newer than
the release, should change the price chart without a code change; the source and date
travel with the figure either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from needle_lib.search.prices import Price, price_of
from needle_lib.search.registry import known_engines
from needle_lib.tomlconf import ConfigError, Key, check_section, load_toml

SCHEMA = {"hub": Key((str,)), "prices": Key((dict,))}
PRICE_SCHEMA = {"price_per_1k": Key((float,), True), "price_source": Key((str,), True),
                "price_date": Key((str, date), True)}


@dataclass(frozen=True)
class SiteConfig:
    #: Hugging Face dataset holding the run archive (``needle publish --hub``), if any.
    hub: str | None = None
    prices: dict[str, Price] = field(default_factory=dict)


def load_site_config(path: Path) -> SiteConfig:
    data = check_section(load_toml(path), SCHEMA, path=path)
    prices = {}
    for engine, values in data.get("prices", {}).items():
        section = f"prices.{engine}"
        check_section(values, PRICE_SCHEMA, path=path, section=section)
        price = price_of(values, path, section)
        if price is None:
            raise ConfigError(f"{path}: [{section}] sets no price")
        prices[engine] = price
    return SiteConfig(hub=data.get("hub"), prices=prices)


def engine_prices(config: SiteConfig) -> dict[str, Price]:
    """Each known engine's price (spec or engine file), then the site config's overrides."""
    prices = {name: spec.price for name, spec in known_engines().items() if spec.price}
    return {**prices, **config.prices}
