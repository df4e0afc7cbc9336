"""The legal matcher: every extractor on a table, the docket rule, gold in NEEDLE's shape."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from needle_lib.benches.legal import match as legal_match
from needle_lib.benches.legal.bench import LEGAL
from needle_lib.benches.legal.match import (
    GoldError,
    LegalGold,
    citation_key,
    docket_keys,
    extract_ids,
    match_result,
)
from needle_lib.benches.queries import load_queries
from needle_lib.search.types import SearchResult

REPORTER_CASES = [
    ("Loper Bright v. Raimondo, 603 U.S. 369 (2024)", "603:us:369"),
    ("603 U. S. 369", "603:us:369"),
    ("144 S. Ct. 2244", "144:sct:2244"),
    ("144 S.Ct. 2244", "144:sct:2244"),
    ("219 L. Ed. 2d 832", "219:led2d:832"),
    ("100 L.Ed. 5", "100:led:5"),
    ("12 F. 4", "12:f:4"),
    ("300 F.2d 14", "300:f2d:14"),
    ("99 F.3d 1000", "99:f3d:1000"),
    ("Fresh Mix v. Pisanelli, 89 F.4th 1188 (9th Cir. 2024)", "89:f4th:1188"),
    ("89 F. 4th 1188", "89:f4th:1188"),
    ("10 F. Supp. 20", "10:fsupp:20"),
    ("500 F. Supp. 2d 1", "500:fsupp2d:1"),
    ("700 F. Supp. 3d 45", "700:fsupp3d:45"),
    ("12 F. App'x 34", "12:fappx:34"),
    ("12 F. App’x 34", "12:fappx:34"),
    ("13 Fed. Appx. 35", "13:fappx:35"),
    ("2024 WL 1234567", "2024:wl:1234567"),
    ("600 B.R. 10", "600:br:10"),
    ("150 Fed. Cl. 1", "150:fedcl:1"),
    ("300 A.3d 12", "300:a3d:12"),
    ("500 P.3d 700", "500:p3d:700"),
    ("200 N.E.3d 5", "200:ne3d:5"),
    ("900 N.W.2d 5", "900:nw2d:5"),
    ("300 So. 3d 1", "300:so3d:1"),
    ("880 S.E.2d 9", "880:se2d:9"),
    ("650 S.W.3d 2", "650:sw3d:2"),
    ("15 Cal. 5th 100", "15:cal5th:100"),
    ("300 Cal. Rptr. 3d 1", "300:calrptr3d:1"),
    ("190 N.Y.S.3d 4", "190:nys3d:4"),
    ("5 people in 2024 and then 89 F.4th 1188", "89:f4th:1188"),
]
NOT_CITATIONS = [
    "5 people in 2024",           # not a reporter
    "123 L. Ed. 2d",              # no page
    "in 2024 the court held",
    "603 U.S. ___ (2024)",        # slip opinion: no page yet
    "Route 66 Main Street 12",
]


@pytest.mark.parametrize(("text", "key"), REPORTER_CASES)
def test_each_reporter_normalises_to_vol_reporter_page(text, key):
    assert key in extract_ids(text=text, url="").cites


@pytest.mark.parametrize("text", NOT_CITATIONS)
def test_no_citation_without_an_allowed_reporter_and_a_page(text):
    assert extract_ids(text=text, url="").cites == frozenset()


@pytest.mark.parametrize(("raw", "key"), [
    ("89 F.4th 1188", "89:f4th:1188"), ("144 S. Ct. 2244", "144:sct:2244"),
    ("13 Fed. Appx. 35", "13:fappx:35"), ("2024 U.S. App. LEXIS 12", "2024:usapplexis:12"),
    ("no citation", None),
])
def test_gold_citations_normalise_the_same_way(raw, key):
    assert citation_key(raw) == key


@pytest.mark.parametrize(("text", "keys"), [
    ("No. 25-2462", {"25-2462"}),
    ("Nos. 22-1345-cv, 22-1346", {"22-1345", "22-1346"}),
    ("Docket 25 – 2462", {"25-2462"}),
    ("No. 2023-1367 (Fed. Cir.)", {"23-1367"}),
    ("No. 23-0123", {"23-123"}),
    ("Application 23A123", {"23a123"}),
    ("decided 2024-05-12", set()),
    ("on 12-05-2024", set()),
    ("phone 555-1234-5678", set()),
    ("ISBN 978-3-16", set()),
])
def test_docket_numbers(text, keys):
    assert docket_keys(text) == keys


@pytest.mark.parametrize(("url", "field", "value"), [
    ("https://www.courtlistener.com/opinion/10865557/fresh-mix-llc-v-pisanelli-bice-pllc/",
     "clusters", "10865557"),
    ("https://www.courtlistener.com/opinion/10865557", "clusters", "10865557"),
    ("https://supreme.justia.com/cases/federal/us/410/113/", "cites", "410:us:113"),
    ("https://supreme.justia.com/cases/federal/us/601/22-451/", "dockets", "22-451"),
    ("https://law.justia.com/cases/federal/appellate-courts/ca9/25-2462/25-2462-2026-05-12.html",
     "dockets", "25-2462"),
    ("https://www.law.cornell.edu/cfr/text/17/240.10b-5", "cfr", "17:240.10b-5"),
    ("https://www.ecfr.gov/current/title-17/section-240.10b-5", "cfr", "17:240.10b-5"),
    ("https://www.ecfr.gov/current/title-17/chapter-II/part-240/subpart-A/section-240.10b-5"
     "?toc=1", "cfr", "17:240.10b-5"),
    ("https://www.ecfr.gov/current/title-40/part-60/section-60.1", "cfr", "40:60.1"),
])
def test_ids_in_urls(url, field, value):
    assert value in getattr(extract_ids(text="", url=url), field)


def test_a_justia_docket_segment_is_never_read_as_a_page():
    found = extract_ids(text="", url="https://supreme.justia.com/cases/federal/us/601/22-451/")
    assert found.cites == frozenset()


@pytest.mark.parametrize(("text", "key"), [
    ("17 CFR 240.10b-5", "17:240.10b-5"),
    ("17 C.F.R. § 240.10b-5.", "17:240.10b-5"),
    ("17 C.F.R. §§ 240.10b-5(b)", "17:240.10b-5"),
    ("see 40 CFR part 60.1 for applicability", "40:60.1"),
    ("12 cfr 1026.43(c)", "12:1026.43"),
    ("17 CFR 240.10B-5", "17:240.10b-5"),
])
def test_cfr_citations_in_text(text, key):
    assert extract_ids(text=text, url="").cfr == {key}


def test_a_cfr_part_alone_is_not_a_section():
    assert extract_ids(text="17 CFR part 240", url="").cfr == frozenset()


CASE_GOLD = LegalGold.from_row({
    "case_key": "10865557", "case_name": "Fresh Mix, LLC v. Pisanelli Bice PLLC", "court": "ca9",
    "ids": {"cluster": "10865557", "docket": "25-2462", "cites": ["89 F.4th 1188"]},
    "party_tokens": ["fresh", "pisanelli", "bice"]})
CODE_GOLD = LegalGold.from_row({"case_key": "17:240.10b-5", "ids": {"cfr": "17:240.10b-5"},
                                "citation": "17 CFR 240.10b-5", "heading": "Employment…"})


@pytest.mark.parametrize(("gold", "title", "snippet", "url", "matched", "why"), [
    (CASE_GOLD, "Fresh Mix", "", "https://www.courtlistener.com/opinion/10865557/x/", True,
     "CourtListener cluster 10865557"),
    (CASE_GOLD, "Opinion", "reported at 89 F.4th 1188", "https://a.example/", True,
     "citation 89:f4th:1188"),
    (CASE_GOLD, "Ninth Circuit", "No. 25-2462", "https://a.example/", False,
     "docket 25-2462 but no party token"),
    (CASE_GOLD, "Pisanelli Bice wins appeal", "No. 25-2462", "https://a.example/", True,
     "docket 25-2462 with party 'pisanelli'"),
    (CASE_GOLD, "Bicentennial review", "No. 25-2462", "https://a.example/", False,
     "no party token"),
    (CASE_GOLD, "Case", "No. 25-2462", "https://example.com/fresh-mix-v-pisanelli", True,
     "with party 'fresh'"),
    (CASE_GOLD, "Other", "Smith v. Jones, 89 F.4th 1190", "https://a.example/", False,
     "found cites 89:f4th:1190"),
    (CODE_GOLD, "Rule 10b-5", "", "https://www.law.cornell.edu/cfr/text/17/240.10b-5", True,
     "CFR 17:240.10b-5"),
    (CODE_GOLD, "Rule", "see 17 C.F.R. § 240.10b-5", "https://a.example/", True,
     "CFR 17:240.10b-5"),
    (CODE_GOLD, "Rule", "", "https://www.ecfr.gov/current/title-17/section-240.10b-6", False,
     "found cfr 17:240.10b-6"),
    (CODE_GOLD, "Securities fraud", "a scheme to defraud", "https://a.example/", False,
     "found no case or CFR ids"),
])
def test_match_rules_and_their_reasons(gold, title, snippet, url, matched, why):
    match = match_result(gold, title=title, snippet=snippet, url=url)
    assert match.matched is matched
    assert why in match.why


def test_the_reference_note_a_bare_docket_is_not_a_hit():
    bench = LEGAL
    result = SearchResult(url="https://b.example/1", title="Order", snippet="No. 25-2462")
    match = bench.match(CASE_GOLD, result)
    assert not match.matched and "docket 25-2462" in match.why


# NEEDLE writes legal rows with query_origin and gold as JSON strings (reference A6).
NEEDLE_ROWS = [
    {"query_id": "cb6389ce51ed6084_2026-07-02T14", "query_hash": "cb6389ce51ed6084",
     "query_text": "fresh mix v pisanelli bice ninth circuit after:2026-03-28 before:2026-06-26",
     "query_source": "legal",
     "query_origin": json.dumps({"bucket": "caselaw", "provenance": {
         "case_name": "Fresh Mix, LLC v. Pisanelli Bice PLLC", "date_filed": "2026-05-12",
         "url": "https://www.courtlistener.com/opinion/10865557/fresh-mix-llc-v-pisanelli-bice-pllc/"},
         "syntax": "date"}, sort_keys=True),
     "gold": json.dumps({"case_key": "10865557", "case_name": "Fresh Mix, LLC v. Pisanelli Bice "
                         "PLLC", "court": "ca9", "date_filed": "2026-05-12",
                         "ids": {"cites": ["89 F.4th 1188"], "cluster": "10865557",
                                 "docket": "25-2462"},
                         "party_tokens": ["fresh", "pisanelli", "bice"]}, sort_keys=True),
     "hour_ts": "2026-07-02T14:00:00+00:00"},
    {"query_id": "efca3c7681b79390_2026-07-02T14",
     "query_text": "securities fraud artifice to defraud rule site:law.cornell.edu",
     "query_source": "legal",
     "query_origin": json.dumps({"bucket": "code", "syntax": "site", "provenance": {
         "citation": "17 CFR 240.10b-5", "heading": "...",
         "url": "https://www.ecfr.gov/current/title-17/section-240.10b-5"}}),
     "gold": json.dumps({"case_key": "17:240.10b-5", "citation": "17 CFR 240.10b-5",
                         "heading": "...", "ids": {"cfr": "17:240.10b-5"}})},
]


def test_needle_rows_load_with_string_fields_and_group_by_suite_syntax_court(tmp_path):
    path = tmp_path / "legal.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in NEEDLE_ROWS))
    bench = LEGAL
    (case, code) = load_queries(path)
    case_gold, code_gold = bench.parse_gold(case.gold), bench.parse_gold(code.gold)
    assert case_gold == CASE_GOLD
    assert case_gold.dockets == {"25-2462"} and case_gold.cite_keys == {"89:f4th:1188"}
    assert bench.groups(case.row, case_gold) == {"suite": "caselaw", "syntax": "date",
                                                 "court": "ca9"}
    assert bench.groups(code.row, code_gold) == {"suite": "code", "syntax": "site", "court": ""}
    assert bench.stratum(case.row, case_gold) == "caselaw:date"
    assert "cluster 10865557" in bench.describe(case_gold)
    assert "docket 25-2462 with a party token (fresh, pisanelli, bice)" in \
        bench.describe(case_gold)
    assert bench.describe(code_gold) == "17 CFR 240.10b-5: cfr 17:240.10b-5"


@pytest.mark.parametrize(("gold", "message"), [
    ("nope", "'gold' must be an object"),
    ({"case_key": "1"}, "'ids' must be a non-empty object"),
    ({"ids": {}}, "'ids' must be a non-empty object"),
    ({"ids": {"cluster": ""}}, "none of cluster, docket, cites, cfr"),
    ({"ids": {"cites": [1.5]}}, "'cites' must be a string or a list of strings"),
    ({"ids": {"cluster": "1"}, "party_tokens": "fresh"}, "'party_tokens' must be a list"),
])
def test_unusable_gold_is_a_clear_error(gold, message):
    with pytest.raises(GoldError, match=message):
        LegalGold.from_row(gold)


# --- eyecite + reporters-db (the ``legal`` extra), and the bundled table without them --------

needs_eyecite = pytest.mark.skipif(importlib.util.find_spec("eyecite") is None,
                                   reason="eyecite not installed (uv sync --extra legal)")
#: Example citations whose "page" is a paragraph (¶, P), front matter (roman numerals) or a
#: split suffix: they name no case's first page, so the matcher rightly takes none of them.
_NO_CASE_PAGE = re.compile(r"¶|\bP\s?\d|\s[IVXLCivxlc]+$|\d [A-Z]$")


def _reporter_examples(cite_types: tuple[str, ...]) -> list[str]:
    reporters = importlib.import_module("reporters_db").REPORTERS
    return [example for editions in reporters.values() for edition in editions
            if edition.get("cite_type") in cite_types
            for example in edition.get("examples", []) if example[:1].isdigit()]


@needs_eyecite
def test_reporters_db_examples_match_themselves_as_gold():
    """Every federal, regional and neutral example citation reporters-db ships: found in a
    snippet, and keyed the same as when it is the gold."""
    examples = _reporter_examples(("federal", "state_regional", "neutral"))
    missed = [ex for ex in examples
              if extract_ids(text=f"See {ex}.", url="").cites != {citation_key(ex)}
              or citation_key(ex) is None]
    assert len(examples) > 100
    assert [ex for ex in missed if not _NO_CASE_PAGE.search(ex)] == []


@needs_eyecite
@pytest.mark.parametrize(("variant", "canonical"), [
    ("89 F. 4th 1188", "89 F.4th 1188"), ("13 Fed. Appx. 35", "13 F. App'x 35"),
    ("500 F.Supp.2d 1", "500 F. Supp. 2d 1"), ("2019 IL 123456", "2019 IL 123456"),
    ("2014 IL App (1st) 120583-U", "2014 IL App (1st) 120583-U"),
    ("300 Cal.Rptr.3d 1", "300 Cal. Rptr. 3d 1"), ("144 S.Ct. 2244", "144 S. Ct. 2244"),
])
def test_variant_spellings_and_neutral_citations_key_as_their_reporter(variant, canonical):
    assert citation_key(variant) == citation_key(canonical) is not None
    assert extract_ids(text=f"held in {variant}", url="").cites == {citation_key(canonical)}


def test_the_bundled_reporter_table_is_the_fallback(monkeypatch):
    """Without eyecite the same table of reporters keys the same way, and non-citations stay
    non-citations."""
    monkeypatch.setattr(legal_match, "_eyecite", lambda: None)
    legal_match.reporter_citations.cache_clear()
    try:
        for text, key in REPORTER_CASES:
            assert key in extract_ids(text=text, url="").cites, text
        for text in NOT_CITATIONS:
            assert extract_ids(text=text, url="").cites == frozenset(), text
        assert citation_key("89 F. 4th 1188") == "89:f4th:1188"
    finally:
        legal_match.reporter_citations.cache_clear()
