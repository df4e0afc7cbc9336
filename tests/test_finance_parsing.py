"""Pure finance generation rules: Wikidata claims, XBRL quarters, documents, filing queries,
company selection, registrable domains."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.benches.finance import claims as wd
from needle_lib.benches.finance.companies import (
    TIERS,
    CompanyOrderError,
    check_market_cap_order,
    distinct_companies,
    tiered_companies,
)
from needle_lib.benches.finance.document import html_to_text
from needle_lib.benches.finance.filingdoc import (
    excerpt,
    normalise,
    read_reply,
    rejection,
    with_syntax,
)
from needle_lib.benches.finance.sources import Company
from needle_lib.benches.finance.xbrl import quarter_facts
from needle_lib.net.domains import registrable_domain
from needle_lib.testing.finance_sources import (
    WIKIDATA,
    _item,
    _quantity,
    _statement,
    _string,
    _time,
)

# --- Wikidata claims ---------------------------------------------------------------------


def test_ceo_skips_deprecated_and_ended_terms_and_takes_the_latest_start() -> None:
    ceo = wd.current_ceo(WIKIDATA["Q1001"].claims)
    # Q2001 deprecated (despite the newest start), Q2002 ended, Q2005 ended at an unknown
    # date; Q2003 (2019) beats Q2004 (2016).
    assert ceo == wd.Ceo("Q2003", 2019)


def test_ceo_preferred_rank_beats_a_later_start() -> None:
    assert wd.current_ceo(WIKIDATA["Q1002"].claims) == wd.Ceo("Q2011", 2010)


def test_ceo_without_start_year_and_without_any_sitting_ceo() -> None:
    assert wd.current_ceo(WIKIDATA["Q1003"].claims) == wd.Ceo("Q2021", None)
    assert wd.current_ceo(WIKIDATA["Q1008"].claims) is None  # the only CEO left in 2024
    assert wd.current_ceo({}) is None


def test_a_qualifier_of_the_wrong_shape_reads_as_none() -> None:
    """Wikidata's JSON is another party's: a start qualifier that is a number, not a list
    of snaks, is no start year (it raised TypeError)."""
    statement = {"rank": "normal", "qualifiers": {wd.START: 2019},
                 "mainsnak": {"snaktype": "value",
                              "datavalue": {"value": {"id": "Q7"}, "type": "wikibase-entityid"}}}
    assert wd.current_ceo({wd.CEO: [statement]}) == wd.Ceo("Q7", None)


def test_single_valued_facts_use_the_best_rank() -> None:
    claims = {
        "P571": [_statement("P571", _time(1990)), _statement("P571", _time(1985), "preferred"),
                 _statement("P571", _time(1970), "deprecated")],
        "P856": [_statement("P856", _string("https://old.example.com"), "deprecated"),
                 _statement("P856", _string("https://new.example.com"))],
        "P1278": [_statement("P1278", _string("not-an-lei")),
                  _statement("P1278", _string("549300abcdefghijkl12"))],
    }
    assert wd.founded_year(claims) == 1985
    assert wd.website(claims) == "https://new.example.com"
    assert wd.lei(claims) == "549300ABCDEFGHIJKL12"


def test_years_of_wikidata_times() -> None:
    assert wd.year_of(_time(1984, 3, 1)["value"]) == 1984
    assert wd.year_of({"time": "-0300-00-00T00:00:00Z"}) is None  # BCE
    assert wd.year_of({"time": "+0000-00-00T00:00:00Z"}) is None
    assert wd.year_of(None) is None


def test_employees_take_the_latest_point_in_time() -> None:
    assert wd.employees(WIKIDATA["Q1001"].claims) == (45200, 2025)
    undated = {"P1128": [_statement("P1128", _quantity(10))]}
    assert wd.employees(undated) == (10, None)
    tie = {"P1128": [_statement("P1128", _quantity(10), P585=_time(2024)),
                     _statement("P1128", _quantity(12), P585=_time(2024)),
                     _statement("P1128", _quantity(99), "deprecated", P585=_time(2026))]}
    assert wd.employees(tie) == (12, 2024)


def test_company_detection_by_class_or_company_only_property() -> None:
    assert wd.is_company(WIKIDATA["Q1001"].claims)  # public company
    assert wd.is_company(WIKIDATA["Q1003"].claims)  # a bank, but listed on an exchange
    assert not wd.is_company(WIKIDATA["Q9001"].claims)  # the TV episode
    assert not wd.is_company({"P31": [_statement("P31", _item("Q5"))]})


def test_hq_location_and_country_entities() -> None:
    assert wd.first_entity(WIKIDATA["Q1001"].claims, wd.HEADQUARTERS) == "Q3001"
    assert wd.first_entity(WIKIDATA["Q3001"].claims, wd.COUNTRY) == "Q30"
    assert wd.first_entity(WIKIDATA["Q1002"].claims, wd.HEADQUARTERS) is None


# --- registrable domains -----------------------------------------------------------------

@pytest.mark.parametrize(("url", "domain"), [
    ("https://investors.acme-robotics.com/home", "acme-robotics.com"),
    ("http://www.borealis-energy.co.uk/", "borealis-energy.co.uk"),
    ("WWW.Example.ORG", "example.org"),
    ("https://127.0.0.1/x", None),
    ("localhost", None),
    ("https://co.uk", None),
])
def test_registrable_domain_from_the_bundled_suffix_list(url: str, domain: str | None) -> None:
    assert registrable_domain(url) == domain


# --- XBRL quarters -----------------------------------------------------------------------

def _raw(start: str, end: str, val: float, fy: int = 2026, fp: str = "Q1",
         form: str = "10-Q") -> dict:
    return {"start": start, "end": end, "val": val, "fy": fy, "fp": fp, "form": form,
            "accn": "0000000001-26-000001", "filed": "2026-05-01"}


def _gaap(*raws: dict, concept: str = "NetIncomeLoss", unit: str = "USD") -> dict:
    return {concept: {"label": concept, "units": {unit: list(raws)}}}


def test_only_quarter_spans_count_and_the_filing_quarter_beats_its_comparative() -> None:
    gaap = _gaap(
        _raw("2026-01-01", "2026-06-30", 900, fp="Q2"),  # six months to date
        _raw("2026-04-01", "2026-06-30", 500, fp="Q2"),
        _raw("2025-04-01", "2025-06-30", 400, fp="Q2"),  # prior-year comparative, same fy/fp
        _raw("2025-01-01", "2025-12-31", 1800, fy=2025, fp="FY", form="10-K"),
        _raw("2025-07-01", "2025-09-30", 300, fy=2025, fp="Q3", form="8-K"),
    )
    facts = quarter_facts(gaap, "net_income")
    assert [(f.fy, f.fp, f.value, f.end) for f in facts] == [(2026, "Q2", 500.0, "2026-06-30")]
    assert facts[0].quarter == "q2 fiscal 2026"


@pytest.mark.parametrize(("days", "kept"), [(69, False), (70, True), (110, True), (111, False)])
def test_quarter_span_bounds(days: int, kept: bool) -> None:
    end = date(2026, 3, 31)
    gaap = _gaap(_raw(str(end - timedelta(days=days)), str(end), 1.0))
    assert bool(quarter_facts(gaap, "net_income")) is kept


def test_first_concept_with_quarters_wins_and_units_follow_the_field() -> None:
    gaap = {
        **_gaap(_raw("2025-01-01", "2025-09-30", 5, fp="Q3"), concept="NetIncomeLoss"),
        **_gaap(_raw("2026-01-01", "2026-03-31", 7), concept="ProfitLoss"),
        **_gaap(_raw("2026-01-01", "2026-03-31", 1.5), concept="EarningsPerShareDiluted",
                unit="USD/shares"),
    }
    assert [f.value for f in quarter_facts(gaap, "net_income")] == [7.0]  # YTD-only skipped
    assert [f.value for f in quarter_facts(gaap, "eps_diluted")] == [1.5]
    assert quarter_facts(gaap, "operating_income") == []


def test_newest_quarters_first_and_capped() -> None:
    raws = [_raw(f"{y}-01-01", f"{y}-03-31", y, fy=y) for y in range(2015, 2027)]
    facts = quarter_facts(_gaap(*raws), "net_income", limit=6)
    assert [f.fy for f in facts] == list(range(2026, 2020, -1))


# --- documents and filing queries --------------------------------------------------------

def test_html_to_text_keeps_visible_text_only() -> None:
    html = ("<html><head><title>T</title><style>p{}</style></head><body>"
            "<script>bad()</script><noscript>nojs</noscript><svg><text>chart</text></svg>"
            '<div style="display:none"><ix:header><ix:hidden>hidden fact</ix:hidden>'
            "</ix:header></div><p>Ap<b>ple</b> &amp; Co</p><p>next</p>line<br/>break"
            "<table><tr><td>a</td><td>b</td></tr></table></body></html>")
    assert html_to_text(html) == "Apple & Co next line break a b"


@given(st.text(max_size=200))
def test_html_to_text_never_fails(html: str) -> None:
    text = html_to_text(html)
    assert "  " not in text and text == text.strip()


def test_excerpt_skips_the_cover_or_keeps_the_end() -> None:
    long = "".join(str(i % 10) for i in range(20000))
    assert excerpt(long) == long[1500:9500]
    assert excerpt("x" * 5000) == "x" * 5000


def test_read_reply_takes_the_first_real_line_and_spots_refusals() -> None:
    assert read_reply('```\nacme "big deal" query\n```') == 'acme "big deal" query'
    assert read_reply("Query:  acme \u201cbig deal\u201d  now") == 'acme "big deal" now'
    assert read_reply("no_distinct_query") is None
    assert read_reply("  \n ") is None


ACME = Company(1, "ACMR", "ACME ROBOTICS INC")
DOC = ("On May 29, 2026 Acme Robotics, Inc. entered into a definitive agreement to acquire "
       "Halvorsen Marine Systems AS. The HLX\u2011401 Phase\u00a02 trial began.")


@pytest.mark.parametrize(("query", "reason"), [
    ('acme robotics "acquire Halvorsen Marine Systems" deal', None),
    ('acme "hlx-401 phase 2 trial" results', None),  # dashes, spaces and case normalised
    ('acme 0001000001-26-000088 "acquire Halvorsen Marine"', "accession"),
    ('acme 000100000126000088 "acquire Halvorsen Marine"', "accession"),
    ('acme "Halvorsen Marine" site https://sec.gov', "URL"),
    ('acme robotics "orbital tug contract" news', "not in the document"),
    ("acme robotics Halvorsen Marine deal", "double quotes"),
    ('acme "Halvorsen Marine" "definitive agreement"', "double quotes"),
    ('acme "Halvorsen" deal today', "quoted span of 1 words"),
    ('"acquire Halvorsen Marine Systems" deal news', "does not name the company"),
    ('acme "Halvorsen', "words"),
])
def test_query_checks(query: str, reason: str | None) -> None:
    found = rejection(query, text=DOC, company=ACME)
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found


def test_normalise_folds_typography() -> None:
    assert normalise("Port\u00a0of \u201cTacoma\u201d \u2014 It\u2019s") == \
        "port of \"tacoma\" - it's"


def test_syntax_variants() -> None:
    query = 'acme "acquire Halvorsen" deal'
    assert with_syntax(query, "quoted", "2026-06-02") == query
    assert with_syntax(query, "plain", "2026-06-02") == "acme acquire Halvorsen deal"
    assert with_syntax(query, "site", "2026-06-02") == "acme acquire Halvorsen deal site:sec.gov"
    assert with_syntax(query, "date", "2026-06-02") == \
        "acme acquire Halvorsen deal after:2026-04-18 before:2026-07-17"


# --- company selection -------------------------------------------------------------------

def _listing(n: int) -> list[Company]:
    return [Company(i + 1, "AAPL" if i == 3 else f"T{i}", f"Company {i}") for i in range(n)]


def test_tiers_draw_per_tier_seeded_and_tagged() -> None:
    listing = _listing(2600)
    chosen = tiered_companies(listing, 33, seed=5)
    assert [c.tier for c in chosen] == ["mega"] * 33 + ["large"] * 33 + ["mid"] * 33
    positions = {c.cik - 1 for c in chosen}
    for tier in TIERS:
        assert sum(tier.start <= p < tier.end for p in positions) == 33
    assert tiered_companies(listing, 33, seed=5) == chosen
    assert tiered_companies(listing, 33, seed=6) != chosen


def test_share_classes_are_one_company() -> None:
    listing = [Company(1, "GOOGL", "Alphabet Inc."), Company(1, "GOOG", "Alphabet Inc."),
               Company(2, "MSFT", "Microsoft Corp")]
    assert [c.ticker for c in distinct_companies(listing, 5)] == ["GOOGL", "MSFT"]
    assert sorted(c.ticker for c in tiered_companies(listing, 5, seed=1)) == ["GOOGL", "MSFT"]


def test_market_cap_order_sanity_check() -> None:
    check_market_cap_order(_listing(2600))
    check_market_cap_order([Company(1, "ZZZ", "Small list")])  # too short to judge
    shuffled = _listing(300)
    shuffled.append(shuffled.pop(3))  # AAPL moved to the end
    with pytest.raises(CompanyOrderError, match="no longer looks ordered by market value"):
        check_market_cap_order(shuffled)
