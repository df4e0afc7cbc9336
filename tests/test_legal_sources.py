"""The legal source clients against loopback fakes in the documented shapes: CourtListener v4
search (token auth, parameters, 401), eCFR titles/structure JSON and section XML."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from needle_lib.benches.legal.sources import (
    TOKEN_ENV,
    CourtListenerClient,
    EcfrClient,
    MissingToken,
    SectionRef,
    SectionXMLError,
    TokenRejected,
    parse_case,
    parse_section_xml,
    walk_sections,
)
from needle_lib.net.sources import SourceError
from needle_lib.testing.legal_sources import opinion_record, section_xml, structure_node
from needle_lib.testing.legal_world import fake_sources


async def no_sleep(_: float) -> None:
    return None


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def fake():
    with fake_sources() as server:
        yield server


async def _opinions(env, court="ca9", after=date(2026, 6, 1), before=date(2026, 6, 30),
                    sleep=no_sleep):
    client = CourtListenerClient(env=env, sleep=sleep)
    try:
        return await client.opinions(court, filed_after=after, filed_before=before)
    finally:
        await client.aclose()


def test_courtlistener_sends_the_token_and_the_documented_parameters(fake):
    env = {**fake.env(), "NEEDLE_CONTACT": "me@example.com"}
    cases, unusable = run(_opinions(env))
    assert [c.cluster_id for c in cases] == [101, 102]   # newest first, June only
    assert unusable == 1                                  # the record without a case name
    assert fake.search_params == [{"type": "o", "court": "ca9", "filed_after": "06/01/2026",
                                   "filed_before": "06/30/2026", "order_by": "dateFiled desc",
                                   "stat_Precedential": "on"}]
    assert fake.user_agents[-1].endswith("(me@example.com)")
    fresh = cases[0]
    assert (fresh.case_name, fresh.docket, fresh.citations, fresh.date_filed) == (
        "Fresh Mix, LLC v. Pisanelli Bice PLLC", "25-2462", ("89 F.4th 1188",),
        date(2026, 6, 12))
    assert fresh.url == ("https://www.courtlistener.com/opinion/101/"
                         "fresh-mix-llc-v-pisanelli-bice-pllc/")


def test_no_token_is_a_clear_error_before_any_request(fake):
    env = {k: v for k, v in fake.env().items() if k != TOKEN_ENV}
    with pytest.raises(MissingToken, match=TOKEN_ENV):
        CourtListenerClient(env=env)
    assert fake.requests["search"] == 0


def test_a_refused_token_is_an_error_naming_the_variable_not_an_empty_result(fake):
    env = {**fake.env(), TOKEN_ENV: "expired-token"}
    with pytest.raises(TokenRejected, match=f"HTTP 401.*{TOKEN_ENV}") as caught:
        run(_opinions(env))
    assert caught.value.status == 401
    assert fake.requests["search"] == 1                   # not retried: it would fail again


def test_server_errors_are_retried_then_reported_as_a_source_error(fake):
    fake.failures["/api/rest/v4/search/"] = 503
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with pytest.raises(SourceError, match="HTTP 503"):
        run(_opinions(fake.env(), sleep=sleep))
    assert fake.requests["failures"] == 3
    assert [w for w in waits if w >= 1] == [1.0, 2.0]     # backoff (rate-limit waits aside)


@pytest.mark.parametrize(("change", "usable"), [
    ({}, True),
    ({"caseName": ""}, False),
    ({"dateFiled": "not a date"}, False),
    ({"cluster_id": None}, False),
    ({"court_id": ""}, False),
    ({"docketNumber": "", "citation": []}, False),      # nothing to find it by
    ({"docketNumber": "", "citation": ["1 F.4th 2"]}, True),
    ({"dateFiled": "2026-06-12T00:00:00-07:00"}, True),  # v3-style timestamps still read
    ({"cluster_id": "9"}, True),                         # ids come as numbers or text
    ({"caseName": {"name": "A v. B"}}, False),           # a field of the wrong type
    ({"court_id": ["ca9"]}, False),
    ({"docketNumber": True}, False),
    ({"citation": [{"cite": "1 F.4th 2"}]}, False),
])
def test_a_case_needs_name_date_cluster_court_and_a_docket_or_citation(change, usable):
    record = {**opinion_record(9, "ca9", "A v. B", "2026-06-12", docket="25-1"), **change}
    assert (parse_case(record) is not None) is usable


def test_structure_walk_skips_reserved_unlabelled_and_non_section_nodes():
    tree = structure_node("title", "17", "T", children=[
        structure_node("chapter", "II", "SEC", children=[
            structure_node("part", "240", "General rules", children=[
                structure_node("subpart", "A", "Rules", children=[
                    structure_node("section", "240.10b-5", "Employment of devices."),
                    structure_node("section", "240.10b-6", "[Reserved]", reserved=True),
                    structure_node("section", "240.10b-7", ""),
                ]),
                structure_node("appendix", "Appendix A to Part 240", "Forms"),
                structure_node("section", "240.0-1 – 240.0-3", "A range"),
            ]),
            structure_node("part", "241", "Reserved", reserved=True, children=[
                structure_node("section", "241.1", "Inside a reserved part")]),
        ]),
        structure_node("section", "1.1", "Outside any part"),
    ])
    assert walk_sections(tree, 17) == [
        SectionRef(17, "240", "240.10b-5", "Employment of devices.")]


REF = SectionRef(17, "240", "240.10b-5", "Employment of manipulative and deceptive devices.")


def test_section_xml_text_comes_from_the_sections_own_paragraphs():
    xml = section_xml("240", "240.10b-5", REF.label, ["First rule.", "(a) Second & third."])
    section = parse_section_xml(xml, REF)
    assert section.text == "First rule. (a) Second & third."
    assert section.heading == REF.label
    assert "U.S.C." not in section.text                   # the part's authority note


def test_section_xml_without_the_section_is_an_error():
    xml = section_xml("240", "240.10b-6", "Other", ["Text."])
    with pytest.raises(SectionXMLError, match=r"holds no section 240\.10b-5"):
        parse_section_xml(xml, REF)


@pytest.mark.parametrize("xml", [
    "<DIV5><DIV8 N='240.10b-5' TYPE='SECTION'><P>unclosed",
    # an entity bomb: the stdlib parser would expand it; defusedxml refuses
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
    '<DIV5><DIV8 N="240.10b-5" TYPE="SECTION"><P>&lol2;</P></DIV8></DIV5>',
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]>'
    '<DIV5><DIV8 N="240.10b-5" TYPE="SECTION"><P>&ext;</P></DIV8></DIV5>',
])
def test_malformed_or_unsafe_xml_is_refused(xml):
    with pytest.raises(SectionXMLError, match="unusable XML"):
        parse_section_xml(xml, REF)


def test_ecfr_titles_structure_and_section_over_http(fake):
    async def go():
        client = EcfrClient(env=fake.env(), sleep=no_sleep)
        try:
            dates = await client.issue_dates()
            await client.issue_dates()                    # fetched once
            refs = await client.sections(17, dates[17])
            section = await client.section(refs[0], dates[17])
            return dates, refs, section
        finally:
            await client.aclose()

    dates, refs, section = run(go())
    assert dates == {17: "2026-06-30", 40: "2026-06-30"}  # reserved title 35 left out
    assert fake.requests["titles"] == 1
    assert [r.identifier for r in refs][:2] == ["240.10b-5", "240.10b5-1"]
    assert "240.3a-1" not in {r.identifier for r in refs} and "299.1" not in {
        r.identifier for r in refs}
    assert section.text.startswith("It shall be unlawful for any person")
    assert refs[0].url == "https://www.ecfr.gov/current/title-17/section-240.10b-5"
    assert refs[0].citation == "17 CFR 240.10b-5"
