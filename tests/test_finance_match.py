"""The finance matcher, one table per field type: what counts as stating the gold, and what
must not (the lessons NEEDLE's tests pin, plus our own)."""

from __future__ import annotations

import importlib.util

import pytest

from needle_lib.benches.finance import countries
from needle_lib.benches.finance.match import (
    FinanceGold,
    GoldError,
    amounts,
    match_result,
    squad_norm,
)


def gold(field: str, field_type: str, value, *aliases) -> FinanceGold:
    return FinanceGold(field, field_type, value, tuple(aliases))


def hit(g: FinanceGold, text: str, url: str = "https://example.org/") -> bool:
    return match_result(g, title="", snippet=text, url=url).matched


@pytest.mark.parametrize("text, expected", [
    ("Net income was $18.78 billion in the quarter", True),       # within 2 %
    ("Net income was $18.3 billion", False),                      # 2.5 % off
    ("net income of 18,775 million dollars", True),
    ("net income 18,775,000,000", True),
    ("It reported (1,200) thousand", False),                       # wrong sign, wrong size
    ("founded in 2026 it earned little", False),                  # a bare year is no amount
])
def test_money_within_two_percent(text, expected):
    assert hit(gold("net_income", "money", 18775000000.0), text) is expected


@pytest.mark.parametrize("text, expected", [
    ("a net loss of ($1.2 billion)", True),        # accounting parentheses with a currency
    ("a net loss of -$1.2 billion", True),
    ("a loss of $1.2 billion", False),             # no sign: that is +1.2 billion
    ("items (1.2) and (3)", False),                # bare parentheses are not a sign
])
def test_signs_and_accounting_parentheses(text, expected):
    assert hit(gold("net_income", "money", -1.2e9), text) is expected


def test_amount_extraction_skips_bare_years_but_keeps_currency_years():
    assert amounts("in 2024 revenue was $2,024 and 1999 units") == [2024.0]
    assert amounts("EPS $4.93; (2.1m) loss") == [4.93, -2.1e6]


def test_eps_matches_per_share_amounts():
    assert hit(gold("eps_diluted", "money", 0.76), "Diluted EPS was $0.76 per share")
    assert not hit(gold("eps_diluted", "money", 0.76), "Diluted EPS was $0.81")


@pytest.mark.parametrize("text, expected", [
    ("Apple employs about 164,000 employees worldwide", True),
    ("Apple has 150,000 staff", True),                   # within 15 %
    ("Apple has 120,000 employees", False),              # 27 % off
    ("Apple sold 164,000 units", False),                 # no cue word
])
def test_employee_counts_band_with_cue(text, expected):
    assert hit(gold("employees", "numeric_band", 164000), text) is expected


@pytest.mark.parametrize("text, expected", [
    ("Apple was founded in 1976 by Jobs", True),
    ("Apple, 1976 - present", False),              # the year without a founding cue
    ("Apple was founded in 1977", False),
])
def test_years_need_their_cue(text, expected):
    assert hit(gold("founded_year", "year", 1976), text) is expected


@pytest.mark.parametrize("text, expected", [
    ("Apple (NASDAQ: AAPL) rose", True),
    ("shares of aapl stock", False),               # tickers are case-sensitive tokens
    ("AAPLX fund stock", False),                   # and whole tokens
    ("AAPL", False),                               # but need a cue word
])
def test_ticker_case_and_token(text, expected):
    assert hit(gold("ticker", "exact_id", "AAPL"), text) is expected


def test_lei_and_accession_match_as_substrings_of_text_or_url():
    lei = gold("lei", "exact_id", "HWUPKR0MPOU8FGXBT394")
    assert hit(lei, "LEI: HWUP KR0M POU8 FGXB T394")
    accession = gold("filing", "exact_id", "000032019325000079", "0000320193-25-000079")
    assert hit(accession, "10-K", url="https://www.sec.gov/Archives/edgar/data/320193/"
                                      "000032019325000079/aapl-20250927.htm")
    assert hit(accession, "Accession 0000320193-25-000079")
    assert not hit(accession, "Accession 0000320193-25-000080")


@pytest.mark.parametrize("text, expected", [
    ("Apple is headquartered in the United States", True),
    ("Apple, based in the US", True),
    ("Cupertino, U.S.", True),
    ("in God we trust us all", False),             # "us" is not the US
    ("the united states of mind", True),           # long forms match in any case
    ("Apple Inc., a state-chartered firm", False),
])
def test_country_short_forms_are_case_sensitive(text, expected):
    assert hit(gold("hq_country", "country", "United States"), text) is expected


def test_vague_country_aliases_never_match_alone():
    assert not hit(gold("hq_country", "country", "United States", "States"), "many states")


@pytest.mark.parametrize("text, url, expected", [
    ("", "https://investor.apple.com/sec-filings/", True),   # same registrable domain
    ("visit apple.com for more", "https://news.example/", True),
    ("visit pineapple.com", "https://news.example/", False),  # boundary
    ("mirror apple.com-fan.net", "https://news.example/", False),
    ("", "https://apple.com.evil.example/", False),
])
def test_domain_by_registrable_domain_or_written(text, url, expected):
    assert hit(gold("website", "domain", "apple.com"), text, url) is expected


@pytest.mark.parametrize("text, expected", [
    ("Timothy Donald Cook is CEO", True),
    ("CEO Tim Cook said", True),                  # nickname rule
    ("Cook, Tim: chief executive", False),        # given name must come before
    ("Tom Cook, a chef", False),
])
def test_person_and_nickname_rule(text, expected):
    assert hit(gold("ceo", "person", "Timothy Donald Cook"), text) is expected


def test_entity_ignores_legal_suffixes_and_plural():
    g = gold("ceo_company", "entity", "Apple Inc.")
    assert hit(g, "Tim Cook is the CEO of Apple")
    assert hit(gold("ceo_company", "entity", "Alphabet"), "CEO of Alphabets")
    assert not hit(g, "Tim Cook is the CEO of Pineapple Corp")
    assert not hit(g, "Apple pie recipes")  # cue words gate entities too


def test_misses_say_why():
    miss = match_result(gold("founded_year", "year", 1976), title="Apple", snippet="1976",
                        url="https://apple.com")
    assert not miss.matched and "no cue word" in miss.why
    miss = match_result(gold("ceo", "person", "Jensen Huang"), title="NVIDIA", snippet="GPUs",
                        url="https://nvidia.com")
    assert "'Jensen Huang' not in title, snippet or URL" in miss.why


@pytest.mark.parametrize("row, message", [
    ("not an object", "must be an object"),
    ({"field": "ceo", "field_type": "person"}, "gold has no value"),
    ({"field": "ceo", "field_type": "vibes", "value": "x"}, "unknown field_type 'vibes'"),
    ({"field": "ceo", "field_type": "person", "value": "x", "aliases": "y"}, "must be a list"),
])
def test_malformed_gold_is_a_clear_error(row, message):
    with pytest.raises(GoldError, match=message):
        FinanceGold.from_row(row)


def test_squad_norm():
    assert squad_norm("The  U.S.-based, Apple") == "u s based apple"


# --- countries: every alias names its country, every form of it counts --------------------

USA_GOLD = gold("hq_country", "country", "United States of America", "USA", "US", "U.S.",
                "America")


@pytest.mark.parametrize("g, text", [
    (USA_GOLD, "Apple is based in Cupertino, United States"),
    (gold("hq_country", "country", "USA"), "headquartered in the United States"),
    (gold("hq_country", "country", "Holland"), "a chipmaker from the Netherlands"),
    (gold("hq_country", "country", "Netherlands"), "Veldhoven, Holland"),
    (gold("hq_country", "country", "UK"), "a London, United Kingdom firm"),
    (gold("hq_country", "country", "US"), "based in the U.S."),
])
def test_a_country_named_by_an_alias_matches_every_form_of_it(g, text):
    assert hit(g, text)


@pytest.mark.parametrize("g, text", [
    (gold("hq_country", "country", "USA"), "in God we trust us all"),   # short forms: own case
    (gold("hq_country", "country", "India"), "HEADQUARTERED IN CALIFORNIA"),  # codes: never
    (gold("hq_country", "country", "Canada"), "WE CAN HELP"),
])
def test_country_aliases_keep_the_short_form_and_code_rules(g, text):
    assert not hit(g, text)


@pytest.mark.skipif(importlib.util.find_spec("pycountry") is None,
                    reason="pycountry not installed (uv sync --extra countries)")
def test_iso_names_and_codes_with_pycountry():
    assert hit(gold("hq_country", "country", "DEU"), "Walldorf, Germany")
    assert hit(gold("hq_country", "country", "Republic of Korea"), "Suwon, South Korea")
    assert hit(gold("hq_country", "country", "Viet Nam"), "Hanoi, Vietnam")
    assert hit(gold("hq_country", "country", "Côte d'Ivoire"),
               "Abidjan, Republic of Côte d'Ivoire")


def test_the_bundled_country_table_is_the_fallback(monkeypatch):
    """Without pycountry the bundled table still maps every alias to its country."""
    monkeypatch.setattr(countries, "_pycountry", lambda: None)
    countries._index.cache_clear()
    try:
        assert hit(USA_GOLD, "based in the United States")
        assert hit(gold("hq_country", "country", "Holland"), "from the Netherlands")
        assert countries.country_forms("Elbonia") == ("Elbonia",)
    finally:
        countries._index.cache_clear()


# --- money gold as text; per-share cues; gold domains; nicknames ---------------------------

@pytest.mark.parametrize("value, text, expected", [
    ("$130.5 billion", "revenue of $130.5 billion for the year", True),
    ("$130.5 billion", "revenue reached 130,497 million", True),
    ("$130.5 billion", "revenue of $120 billion", False),
    ("(1.2 bn)", "a net loss of -$1.2 billion", True),
])
def test_money_gold_written_as_text(value, text, expected):
    assert hit(gold("revenue", "money", value), text) is expected


@pytest.mark.parametrize("text, expected", [
    ("Diluted EPS of $0.76", True),
    ("earned $0.76 per share", True),
    ("Earnings per diluted share: 0.76", True),
    ("shares rose 0.76 points to close at 131.2", False),   # any small decimal is no EPS
])
def test_diluted_eps_needs_a_per_share_cue(text, expected):
    assert hit(gold("eps_diluted", "money", 0.76), text) is expected


@pytest.mark.parametrize("value", ["www.apple.com", "https://www.apple.com/", "Apple.com",
                                   "http://investor.apple.com/sec"])
def test_gold_domains_normalise_like_result_domains(value):
    g = gold("website", "domain", value)
    assert hit(g, "visit apple.com for more", "https://news.example/")
    assert hit(g, "", "https://www.apple.com/iphone")
    assert not hit(g, "visit pineapple.com", "https://news.example/")


def test_a_public_suffix_site_is_its_own_domain():
    g = gold("website", "domain", "https://www.gov.uk/")
    assert hit(g, "see www.gov.uk", "https://news.example/")
    assert not hit(g, "see bbc.co.uk", "https://news.example/")


@pytest.mark.parametrize("value, text, expected", [
    ("William Henry Gates", "Microsoft CEO Bill Gates said", True),
    ("Robert Iger", "Disney chief executive Bob Iger returned", True),
    ("William Henry Gates", "Gates, Bill: CEO of Microsoft", False),  # given name's position
    ("Robert Iger", "CEO Tom Iger", False),
])
def test_nicknames_from_the_nicknames_table(value, text, expected):
    assert hit(gold("ceo", "person", value), text) is expected
