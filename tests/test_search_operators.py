"""Google-style operators are parsed once into a ParsedQuery."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.search import parse_query


def test_operators_are_extracted_and_phrases_kept_in_text() -> None:
    parsed = parse_query('"net income" nvidia site:SEC.gov after:2025-01-01 before:2025-03-31')
    assert parsed.text == '"net income" nvidia'
    assert parsed.sites == ("sec.gov",)
    assert parsed.after == date(2025, 1, 1)
    assert parsed.before == date(2025, 3, 31)
    assert parsed.phrases == ("net income",)


def test_operator_inside_quotes_stays_text() -> None:
    parsed = parse_query('"site:example.com is a domain" whois')
    assert parsed.sites == ()
    assert parsed.text == '"site:example.com is a domain" whois'


def test_several_sites_deduplicated_and_rejoined_for_native_engines() -> None:
    parsed = parse_query("ceo site:https://a.com/ site:b.org SITE:a.com")
    assert parsed.sites == ("a.com", "b.org")
    assert parsed.text_with_sites() == "ceo (site:a.com OR site:b.org)"


def test_unparseable_operators_stay_query_text() -> None:
    parsed = parse_query("launch after:yesterday before:2025-13-01 before:2025W011 site:gov")
    assert parsed.text == "launch after:yesterday before:2025-13-01 before:2025W011 site:gov"
    assert parsed.after is None and parsed.before is None and parsed.sites == ()


@pytest.mark.parametrize(("token", "host"), [
    ("site:sec.gov/cgi-bin/browse-edgar?action=x", "sec.gov"),
    ("site:https://www.SEC.gov/cgi-bin/x", "www.sec.gov"),
    ("site:sec.gov.", "sec.gov"),
    ("site:arxiv.org:443/abs", "arxiv.org"),
    ("site:http://user@example.com/a#b", "example.com"),
])
def test_site_values_become_hosts(token: str, host: str) -> None:
    parsed = parse_query(f"filings {token}")
    assert parsed.sites == (host,)
    assert parsed.text == "filings"


def test_operators_only_query_is_not_empty_but_blank_is() -> None:
    assert not parse_query("site:sec.gov").is_empty
    assert not parse_query("before:2025-01-01").is_empty
    assert parse_query("  ").is_empty


def test_closed_range_fills_open_lower_end() -> None:
    assert parse_query("x before:2024-02-03").closed_range() == "1970-01-01to2024-02-03"
    assert parse_query("x").closed_range() is None


words = st.text(alphabet="abcdefghij ", min_size=0, max_size=40)


@given(words, st.dates(min_value=date(1990, 1, 1), max_value=date(2030, 1, 1)))
def test_text_never_contains_an_operator_token(text: str, day: date) -> None:
    parsed = parse_query(f"{text} after:{day.isoformat()} site:x.org {text}")
    assert parsed.after == day
    assert not any(tok.startswith(("after:", "site:")) for tok in parsed.text.split())
    assert parsed.text == " ".join(f"{text} {text}".split())
