"""Prices per 1,000 queries: on engine specs and engine files, overridden by a site config;
a partial or malformed price is an error naming the file and key."""

from __future__ import annotations

import pytest

from needle_lib.dashboard.site_config import engine_prices, load_site_config
from needle_lib.paths import ENGINES_DIR
from needle_lib.search.engine_config import load_engine_definition
from needle_lib.search.registry import ENGINES
from needle_lib.tomlconf import ConfigError


def test_built_in_and_file_engines_carry_a_sourced_price_or_none():
    assert ENGINES["tavily"].price.per_1k == 8.0 and "tavily.com" in ENGINES["tavily"].price.source
    assert ENGINES["keenable"].price is None  # unknown, never 0
    searxng = load_engine_definition(ENGINES_DIR / "searxng.toml")
    assert searxng.price.per_1k == 0.0 and searxng.price.as_of == "2026-12-01"


def test_a_partial_price_in_an_engine_file_names_the_missing_keys(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('method = "GET"\npath = "/s"\nprice_per_1k = 2.5\n[request]\nquery = "q"\n'
                    '[response]\nresults = "r"\nurl = "u"\n')
    with pytest.raises(ConfigError, match=r"mine.toml: a price needs .*missing price_source, "
                                          r"price_date"):
        load_engine_definition(path)


def test_the_site_config_overrides_a_price_and_checks_it(tmp_path):
    good = tmp_path / "site.toml"
    good.write_text('[prices.exa]\nprice_per_1k = 4\nprice_source = "contract"\n'
                    'price_date = 2026-10-01\n')
    prices = engine_prices(load_site_config(good))
    assert prices["exa"].per_1k == 4.0 and prices["exa"].as_of == "2026-10-01"
    assert prices["tavily"] == ENGINES["tavily"].price
    bad = tmp_path / "bad.toml"
    bad.write_text('[prices.exa]\nprice_per_1k = -1\nprice_source = "x"\n'
                   'price_date = "2026-10-01"\n')
    with pytest.raises(ConfigError, match=r"bad.toml: \[prices.exa\] key 'price_per_1k' must "
                                          r"be a number of US dollars >= 0"):
        load_site_config(bad)
