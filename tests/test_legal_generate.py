"""Legal gold generation: month windows, captions, code-query checks (leaks), the generator
end to end against the loopback fakes, and the `needle legal generate` command."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, date, datetime
from itertools import pairwise

import pytest

from needle_lib import cli
from needle_lib.benches.legal import code_query
from needle_lib.benches.legal.caption import caption_query, party_tokens
from needle_lib.benches.legal.generate import Options, Tally, generate, month_windows
from needle_lib.benches.legal.sources import (
    TOKEN_ENV,
    CourtListenerClient,
    EcfrClient,
    Section,
    SectionRef,
    TokenRejected,
)
from needle_lib.benches.projection import read_reply
from needle_lib.llm import make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.testing.legal_world import NOW, fake_sources

COURTS = ("scotus", "ca1", "ca9", "cafc")
OPTIONS = Options(now=NOW, courts=COURTS, per_court=2, titles=(17, 35, 40), per_title=2,
                  seed=7)


@pytest.mark.parametrize(("now", "first", "last"), [
    (datetime(2026, 7, 2, 14, tzinfo=UTC), (date(2026, 6, 1), date(2026, 6, 30)),
     (date(2025, 1, 1), date(2025, 1, 31))),
    (datetime(2026, 1, 31, tzinfo=UTC), (date(2025, 12, 1), date(2025, 12, 31)),
     (date(2024, 7, 1), date(2024, 7, 31))),
    (datetime(2028, 3, 1, tzinfo=UTC), (date(2028, 2, 1), date(2028, 2, 29)),
     (date(2026, 9, 1), date(2026, 9, 30))),
])
def test_month_windows_are_full_months_before_the_current_one(now, first, last):
    windows = month_windows(now, 18)
    assert len(windows) == 18 and windows[0] == first and windows[-1] == last
    for (newer_first, _), (_, older_last) in pairwise(windows):
        assert (newer_first - older_last).days == 1      # contiguous, no overlap


@pytest.mark.parametrize(("name", "court", "query", "tokens"), [
    ("Fresh Mix, LLC v. Pisanelli Bice PLLC", "ca9", "fresh mix v pisanelli bice ninth circuit",
     ["fresh", "pisanelli", "bice"]),
    ("Loper Bright Enterprises vs. Raimondo", "scotus",
     "loper bright enterprises v raimondo supreme court", ["loper", "bright", "enterprises",
                                                           "raimondo"]),
    ("United States v. 2,164 Watches, More or Less", "ca4",
     "united states v watches more or less fourth circuit", ["watches", "more", "less"]),
    ("Acme Co. v. Zed Corp. Revisions: 6/1/26", "cadc", "acme v zed dc circuit", ["acme"]),
    ("José Núñez v. O’Brien: Opinion on rehearing", "ca1",
     "jose nunez v o'brien first circuit", ["jose", "nunez", "o'brien"]),
    ("In re Grand Jury Subpoena", "ca2", "in re grand jury subpoena second circuit",
     ["grand", "jury", "subpoena"]),
])
def test_captions_drop_suffixes_numbers_and_annotations(name, court, query, tokens):
    caption = caption_query(name, court)
    assert caption is not None and caption.base == query
    assert party_tokens(name) == tokens


@pytest.mark.parametrize("name", [
    "United States v. Doe",                      # no distinctive party word
    "People v. Commissioner",
    "In re Estate",
])
def test_generic_captions_are_rejected(name):
    assert caption_query(name, "ca9") is None


def test_caselaw_syntax_forms():
    caption = caption_query("Fresh Mix, LLC v. Pisanelli Bice PLLC", "ca9")
    filed = date(2026, 5, 12)
    assert caption.with_syntax("quoted", filed) == (
        '"fresh mix" v pisanelli bice ninth circuit', "quoted")
    assert caption.with_syntax("site", filed) == (
        "fresh mix v pisanelli bice ninth circuit site:courtlistener.com", "site")
    assert caption.with_syntax("date", filed) == (
        "fresh mix v pisanelli bice ninth circuit after:2026-03-28 before:2026-06-26", "date")
    # the first party loses "co" mid-name, so it is not in the caption word for word, and
    # the other is a single word: no phrase to quote, the row stays plain
    bare = caption_query("Smith Co. of America v. Jones", "ca1")
    assert bare.base == "smith of america v jones first circuit"
    assert bare.with_syntax("quoted", filed) == (bare.base, "plain")


FRAUD_SECTION = Section(SectionRef(17, "240", "240.10b-5", "Employment of devices."),
                        "It shall be unlawful (a) To employ any device, scheme, or artifice to "
                        "defraud, (b) To make any untrue statement of a material fact.")


@pytest.mark.parametrize(("query", "why"), [
    ('securities fraud "scheme, or artifice to defraud" untrue statement', None),
    ('SECURITIES fraud “scheme, or artifice to defraud” rule', None),
    ('part 240 fraud "scheme, or artifice to defraud"', "leaks the citation ('part 240')"),
    ('rule 240 fraud "scheme, or artifice to defraud"', "leaks the section number ('240')"),
    ('rule 10b-5 fraud "scheme, or artifice to defraud"', "leaks the section number ('10b-5')"),
    ('fraud 240.10b-5 "scheme, or artifice to defraud"',
     "leaks the section number ('240.10b-5')"),
    ('17 CFR fraud "scheme, or artifice to defraud"', "leaks the citation ('CFR')"),
    ('15 U.S.C. fraud "scheme, or artifice to defraud"', "leaks the citation ('U.S.C')"),
    ('§ fraud "scheme, or artifice to defraud"', "leaks the citation ('§')"),
    ('section 10 fraud "scheme, or artifice to defraud"', "leaks the citation ('section 10')"),
    ('title 17 fraud "scheme, or artifice to defraud"', "leaks the citation ('title 17')"),
    ('securities fraud rule', "0 double quotes"),
    ('"untrue statement" and "artifice to defraud" fraud', "4 double quotes"),
    ('fraud "artifice to defraud investors" rule', "is not in the document"),
    ('fraud "defraud" rule now', "quoted span of 1 words"),
    ('"artifice to"', "2 words (want 3-16)"),
])
def test_code_query_checks_and_leaks(query, why):
    query = read_reply(query, code_query.REFUSAL)
    problem = code_query.rejection(query, FRAUD_SECTION)
    assert problem == why if why is None else why in problem


def test_numbers_that_are_not_the_sections_are_fine():
    section = Section(SectionRef(40, "60", "60.1", "Applicability."),
                      "applies to any stationary source built after 1971 with 250 units")
    assert code_query.rejection('"any stationary source" built after 1971', section) is None
    assert "('60')" in code_query.rejection('"any stationary source" subpart 60', section)


@pytest.mark.parametrize(("content", "query"), [
    ('```\nfraud "artifice to defraud" rule\n```', 'fraud "artifice to defraud" rule'),
    ('Query: fraud “artifice to defraud” rule\n(explanation)', 'fraud "artifice to defraud" rule'),
    ("NO_DISTINCT_QUERY", None),
    ("  \n ", None),
])
def test_llm_replies_are_read_leniently(content, query):
    assert read_reply(content, code_query.REFUSAL) == query


def test_code_syntax_forms():
    query = 'fraud "artifice to defraud" rule'
    assert [code_query.with_syntax(query, s) for s in code_query.SYNTAX_CYCLE] == [
        "fraud artifice to defraud rule", query, "fraud artifice to defraud rule",
        "fraud artifice to defraud rule site:law.cornell.edu"]


async def no_sleep(_: float) -> None:
    return None


async def _generate(fake, options=OPTIONS, env=None):
    env = env or fake.env()
    courtlistener = CourtListenerClient(env=env, sleep=no_sleep)
    ecfr = EcfrClient(env=env, sleep=no_sleep)
    llm = make_async_chat_client(generation_model_config(environ=env))
    tally = Tally([courtlistener, ecfr])
    try:
        rows = await generate(options, courtlistener=courtlistener, ecfr=ecfr, llm=llm,
                              tally=tally)
    finally:
        for client in (courtlistener, ecfr, llm):
            await client.aclose()
    return rows, tally


@pytest.fixture
def fake(monkeypatch):
    with fake_sources() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def test_generation_end_to_end_rows_gold_and_drops(fake):
    rows, tally = asyncio.run(_generate(fake))
    by_key = {row["gold"]["case_key"]: row for row in rows}
    assert set(by_key) == {"201", "202", "103", "105", "301",
                           "17:240.10b-5", "17:240.13a-1", "40:60.1"}
    fresh = asyncio.run(_generate(fake))[0]
    assert fresh == rows                                  # same seed, same answers, same rows

    loper = by_key["201"]
    assert loper["query_text"] == "loper bright enterprises v raimondo supreme court"
    assert loper["query_source"] == "legal" and loper["hour_ts"] == "2026-07-02T14:00:00+00:00"
    assert loper["query_id"] == f"{loper['query_hash']}_2026-07-02T14"
    assert loper["gold"] == {
        "case_key": "201", "ids": {"cluster": "201", "docket": "22-451",
                                   "cites": ["603 U.S. 369", "144 S. Ct. 2244"]},
        "party_tokens": ["loper", "bright", "enterprises", "raimondo"], "court": "scotus",
        "date_filed": "2026-06-28", "case_name": "Loper Bright Enterprises v. Raimondo"}
    assert loper["query_origin"]["provenance"]["url"] == (
        "https://www.courtlistener.com/opinion/201/loper-bright-enterprises-v-raimondo/")
    fraud = by_key["17:240.10b-5"]
    assert fraud["gold"] == {"case_key": "17:240.10b-5", "ids": {"cfr": "17:240.10b-5"},
                             "citation": "17 CFR 240.10b-5",
                             "heading": "Employment of manipulative and deceptive devices."}
    assert fraud["query_origin"]["provenance"]["llm_model"] == "fake-projector"

    syntaxes = [row["query_origin"]["syntax"] for row in rows]
    assert syntaxes == ["plain", "quoted", "plain", "site", "plain",   # caselaw cycle
                        "plain", "quoted", "plain"]                      # code cycle
    assert by_key["105"]["query_text"].endswith(" site:courtlistener.com")
    assert by_key["202"]["query_text"] == 'harrow v "department of defense" supreme court'

    assert tally.drops["generic_captions"] == 1           # United States v. Doe
    assert tally.drops["unusable_records"] == 1           # the record without a case name
    assert tally.drops["short_courts"] == 2               # ca1 (nothing), cafc (one case)
    assert tally.drops["short_titles"] == 2               # 35 (reserved), 40 (one passes)
    assert tally.drops["rejected_queries"] == 3
    assert any(reason in tally.samples["rejected_queries"] for reason in (
        "leaks the citation ('part 240')", "not in the document", "leaks the citation ('CFR')"))
    assert (tally.drops["llm_refusals"], tally.drops["thin_sections"]) == (1, 0)


def test_month_windows_reach_the_api_and_months_are_fetched_only_when_needed(fake):
    asyncio.run(_generate(fake, replace(OPTIONS, suites=("caselaw",))))
    by_court: dict[str, list[tuple[str, str]]] = {}
    for params in fake.search_params:
        by_court.setdefault(params["court"], []).append(
            (params["filed_after"], params["filed_before"]))
    assert by_court["scotus"] == [("06/01/2026", "06/30/2026"), ("05/01/2026", "05/31/2026")]
    # (scotus had a case in each of its two newest months: two requests, not eighteen)
    # ca1 has nothing in the window (its one case is from the current month): every month
    assert len(by_court["ca1"]) == 18 and ("01/01/2025", "01/31/2025") in by_court["ca1"]
    assert by_court["ca1"][0] == ("06/01/2026", "06/30/2026")  # never the current month


def test_a_failing_source_drops_what_it_served_and_the_run_goes_on(fake):
    fake.failures["/api/versioner/v1/full/"] = 500
    rows, tally = asyncio.run(_generate(fake))
    assert {row["query_origin"]["suite"] for row in rows} == {"caselaw"}
    assert tally.drops["fetch_errors"] >= 6 and "HTTP 500" in tally.samples["fetch_errors"]
    assert tally.drops["short_titles"] == 3


def test_a_refused_token_stops_the_run_before_any_llm_call(fake):
    env = {**fake.env(), TOKEN_ENV: "revoked"}
    with pytest.raises(TokenRejected, match=TOKEN_ENV):
        asyncio.run(_generate(fake, env=env))
    assert fake.requests["llm"] == 0


def test_a_refused_token_leaves_no_request_in_flight(fake):
    """Every court's request has finished when the error arrives: none is left for the
    loop's shutdown to cancel under closed clients (which surfaced as a flaky "coroutine
    'connect_tcp.<locals>.try_connect' was never awaited" warning)."""
    env = {**fake.env(), TOKEN_ENV: "revoked"}

    async def left_running() -> set[asyncio.Task]:
        with pytest.raises(TokenRejected):
            await _generate(fake, env=env)
        return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(left_running()) == set()
    assert fake.requests["search"] == len(COURTS)  # each court asked once, all answered


@pytest.fixture
def fast_sources(monkeypatch):
    """No rate-limit pauses for the CLI runs (the limiter itself is tested elsewhere)."""
    monkeypatch.setattr(CourtListenerClient, "min_interval", 0.0)
    monkeypatch.setattr(EcfrClient, "min_interval", 0.0)


def test_cli_writes_rows_and_reports_drops(fake, fast_sources, tmp_path, capsys):
    out = tmp_path / "legal.jsonl"
    code = cli.main(["legal", "generate", "--courts", "scotus,ca9", "--per-court", "2",
                     "--titles", "17", "--per-title", "2", "--seed", "7", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6
    assert "wrote 6 rows" in err and "caselaw/plain 2" in err and "dropped:" in err


def test_cli_without_a_token_skips_caselaw_with_one_line(fake, fast_sources, tmp_path,
                                                         capsys, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV)
    out = tmp_path / "legal.jsonl"
    code = cli.main(["legal", "generate", "--titles", "17", "--per-title", "1", "--seed", "7",
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    skipped = [line for line in err.splitlines() if "caselaw skipped" in line]
    assert len(skipped) == 1 and TOKEN_ENV in skipped[0]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["query_origin"]["suite"] for row in rows] == ["code"]
    assert fake.requests["search"] == 0


def test_cli_with_a_refused_token_fails_naming_the_variable(fake, fast_sources, tmp_path,
                                                            capsys, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "revoked")
    out = tmp_path / "legal.jsonl"
    code = cli.main(["legal", "generate", "--suites", "caselaw", "--courts", "ca9",
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "HTTP 401" in err and TOKEN_ENV in err
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--courts", "ca9,ca99"], "unknown value(s) ca99; known values: scotus,"),
    (["--titles", "17,51"], "unknown title(s) 51; known: CFR titles 1-50"),
    (["--suites", "statutes"], "unknown value(s) statutes; known values: caselaw, code"),
    (["--per-court", "0"], "must be at least 1"),
])
def test_cli_rejects_unknown_values_listing_the_known_ones(args, message, capsys):
    with pytest.raises(SystemExit):
        cli.main(["legal", "generate", "--out", "-", *args])
    assert message in capsys.readouterr().err
