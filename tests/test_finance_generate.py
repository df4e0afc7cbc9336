"""`needle finance generate` end to end against the loopback fakes (SEC, Wikidata, GLEIF, LLM)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from needle_lib.benches.finance.generate import Options, Tally, generate
from needle_lib.benches.finance.sources import SecClient
from needle_lib.benches.rows import query_id
from needle_lib.cli import main
from needle_lib.paths import REPO_ROOT
from needle_lib.testing.finance_sources import (
    LLM_MODEL,
    NOW,
    FakeFilingLLM,
    FakeFinanceSources,
    generate_sample,
    no_wait,
)
from needle_lib.testing.openai_server import FakeOpenAIServer

SAMPLE = REPO_ROOT / "fixtures" / "gold" / "finance.sample.jsonl"
ROW_KEYS = {"query_id", "query_hash", "query_text", "query_source", "query_origin",
            "topical_domain", "hour_ts", "query_produced_at", "gold"}


@pytest.fixture(scope="module")
def world():
    with FakeFinanceSources() as sources, FakeFilingLLM() as llm:
        yield sources, llm


@pytest.fixture(scope="module")
def run(world):
    tally = Tally()
    rows = asyncio.run(generate_sample(*world, tally=tally))
    return rows, tally


def _rows(run, bucket: str) -> list[dict]:
    return [r for r in run[0] if r["query_origin"]["bucket"] == bucket]


def _facts(run, entity: str) -> dict[str, dict]:
    return {r["gold"]["field"]: r for r in _rows(run, "finance")
            if r["query_origin"]["provenance"]["entity"] == entity}


def test_rows_have_the_gold_row_shape(run) -> None:
    rows, _ = run
    assert rows
    for row in rows:
        assert set(row) == ROW_KEYS
        assert row["query_id"] == query_id(row["query_text"], NOW)
        assert row["query_id"].startswith(row["query_hash"])
        assert row["hour_ts"] == "2026-07-02T14:00:00+00:00"
        assert row["query_produced_at"] == "2026-07-02T14:25:00+00:00"
        origin, gold = row["query_origin"], row["gold"]
        assert origin["subcategory"] == f"{origin['bucket']}_{gold['field']}"
        assert origin["topical_domain"] == row["topical_domain"] == "finance"
        provenance = origin["provenance"]
        assert provenance["producer"] == "needle finance"
        assert provenance["source_url"].startswith("https://")
        assert isinstance(provenance["cik"], int) and provenance["ticker"]
        assert set(gold) == {"field", "field_type", "value", "aliases", "freshness_window",
                             "tier"}
    assert len({r["query_id"] for r in rows}) == len(rows)


def test_registry_facts_of_a_rich_company(run) -> None:
    facts = _facts(run, "ACME ROBOTICS INC")
    values = {field: row["gold"]["value"] for field, row in facts.items()}
    assert values == {
        "ceo": "Dana Whitfield", "ceo_since": 2019, "ceo_company": "Acme Robotics, Inc.",
        "founded_year": 1984, "hq_country": "United States of America",
        "website": "acme-robotics.com", "employees": 45200, "lei": "549300ACMEROBOTICS42",
        "ticker": "ACMR",
    }
    assert facts["ceo"]["gold"]["aliases"] == ["Dana J. Whitfield"]
    assert facts["website"]["gold"]["aliases"] == ["https://investors.acme-robotics.com/home"]
    assert "USA" in facts["hq_country"]["gold"]["aliases"]
    assert facts["ceo_since"]["query_text"] == \
        "when did dana whitfield become ceo of acme robotics"
    assert facts["ticker"]["query_origin"]["provenance"]["registry"] == "sec"
    assert facts["lei"]["query_origin"]["provenance"]["registry"] == "wikidata"
    assert facts["ceo"]["query_origin"]["provenance"]["qid"] == "Q1001"
    assert all(r["query_origin"]["syntax"] == "plain" and r["gold"]["tier"] == ""
               for r in facts.values())
    natural = {r["gold"]["field"]: r["query_text"] for r in _rows(run, "finance_nl")
               if r["query_origin"]["provenance"]["entity"] == "ACME ROBOTICS INC"}
    assert natural["ceo"] == "who is the ceo of acme robotics"
    assert set(natural) == set(values) - {"ceo_since", "ceo_company"}  # no NL template


def test_gleif_fills_a_missing_lei_only_on_an_exact_legal_name(run) -> None:
    borealis = _facts(run, "BOREALIS ENERGY CORP /DE/")
    lei = borealis["lei"]
    assert lei["gold"]["value"] == "549300BOREALISENER77"
    assert lei["query_origin"]["provenance"]["registry"] == "gleif"
    assert lei["query_origin"]["provenance"]["source_url"].endswith(
        "/lei-records/549300BOREALISENER77")
    assert borealis["hq_country"]["gold"]["value"] == "Canada"  # no P159: the item's P17
    assert borealis["website"]["gold"]["value"] == "borealis-energy.co.uk"
    assert "employees" not in borealis  # the latest head count is from 2021
    assert borealis["ceo"]["gold"]["value"] == "Ingrid Solberg"  # preferred rank
    assert "lei" not in _facts(run, "COBALT BANK & CO")  # GLEIF had only a near miss


def test_thin_companies_are_dropped_and_gleif_is_not_asked_for_sure_drops(world, run) -> None:
    entities = {r["query_origin"]["provenance"]["entity"] for r in _rows(run, "finance")}
    assert entities == {"ACME ROBOTICS INC", "BOREALIS ENERGY CORP /DE/", "COBALT BANK & CO",
                        "GRANITE LOGISTICS INC", "HELIX THERAPEUTICS INC"}
    gleif = world[0].paths("/lei-records")
    assert any("DUNMORE" in path for path in gleif)  # 3 facts: the LEI would make 4
    assert not any("EMBER" in path for path in gleif)  # unresolved: ticker only


def test_drop_counts(run) -> None:
    _, tally = run
    assert dict(tally.drops) == {
        "no_facts": 8,  # finance 5 (Dunmore, Ember, 3 unknown to Wikidata); filings 2; doc 1
        "fetch_errors": 1,  # Falcon's Wikidata item answers 500
        "thin_document": 1, "llm_refusals": 1, "rejected_queries": 2,
    }
    assert tally.summary() == ("dropped: no facts 8 · thin document 1 · LLM refusals 1 · "
                               "LLM errors 0 · rejected queries 2 · fetch errors 1 · "
                               "surplus 0")


def test_filings_rows_are_single_quarter_facts(run) -> None:
    rows = _rows(run, "filings")
    entities = [r["query_origin"]["provenance"]["entity"] for r in rows]
    assert "BOREALIS ENERGY CORP /DE/" not in entities  # year-to-date figures only
    assert "FALCON AEROSPACE CORP" in entities  # its Wikidata failure did not stop the run
    assert [r["query_origin"]["syntax"] for r in rows] == ["plain", "quoted"] * (len(rows) // 2) \
        + ["plain"] * (len(rows) % 2)
    assert {r["gold"]["tier"] for r in rows} == {"mega", "large", "mid"}
    for row in rows:
        provenance, gold = row["query_origin"]["provenance"], row["gold"]
        quarter = f"{provenance['fp'].lower()} fiscal {provenance['fy']}"
        assert quarter in row["query_text"]
        if row["query_origin"]["syntax"] == "quoted":
            assert row["query_text"].startswith('"')
        assert gold["field_type"] == "money" and isinstance(gold["value"], float)
        assert provenance["registry"] == "sec_xbrl"
        assert provenance["source_url"] == \
            f"https://data.sec.gov/api/xbrl/companyfacts/CIK{provenance['cik']:010d}.json"
        assert provenance["age_bucket"] == (
            "recent" if provenance["period_end"] >= "2025-12-14" else "older")


def test_filingdoc_rows(world, run) -> None:
    rows = _rows(run, "filingdoc")
    assert [r["query_origin"]["syntax"] for r in rows] == \
        ["plain", "site", "plain", "quoted", "plain", "date"]
    for row in rows:
        text, gold = row["query_text"], row["gold"]
        provenance = row["query_origin"]["provenance"]
        digits = gold["value"]
        assert re.fullmatch(r"\d{18}", digits)
        assert gold["aliases"] == [f"{digits[:10]}-{digits[10:12]}-{digits[12:]}"]
        assert (gold["field"], gold["field_type"]) == ("filing", "exact_id")
        assert digits not in text and gold["aliases"][0] not in text
        assert provenance["registry"] == "sec_submissions"
        assert provenance["source_url"].startswith(
            f"https://www.sec.gov/Archives/edgar/data/{provenance['cik']}/{digits}/")
        assert provenance["form"] in {"10-K", "10-Q", "8-K"} and provenance["filed"]
        assert provenance["llm_model"] == LLM_MODEL
        syntax = row["query_origin"]["syntax"]
        assert text.count('"') == (2 if syntax == "quoted" else 0)
        assert text.endswith(" site:sec.gov") == (syntax == "site")
        assert ("after:" in text and "before:" in text) == (syntax == "date")
    # the LLM read the filing's own words, not the script, hidden XBRL or head
    prompt = next(p for p in world[1].prompts if "ACME ROBOTICS INC" in p)
    assert "Halvorsen Marine Systems" in prompt
    assert "SCRIPT TEXT" not in prompt and "HIDDEN XBRL FACT" not in prompt


def test_same_seed_same_rows_other_seed_other_draws(world, run) -> None:
    again = asyncio.run(generate_sample(*world))
    assert again == run[0]
    other = asyncio.run(generate_sample(*world, seed=8))
    assert [r["query_text"] for r in _rows((other, None), "filings")] != \
        [r["query_text"] for r in _rows(run, "filings")]


def test_committed_sample_is_what_the_fakes_generate(run) -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == run[0], (
        "fixtures/gold/finance.sample.jsonl is stale: rewrite it with "
        "`uv run python -m needle_lib.testing.finance_sources`")


def test_min_employee_year_and_fields(world) -> None:
    rows = asyncio.run(generate_sample(*world, suites=("finance", "filings"),
                                       min_employee_year=2026, fields=("revenue",)))
    employees = {r["query_origin"]["provenance"]["entity"] for r in rows
                 if r["gold"]["field"] == "employees"}
    assert employees == {"GRANITE LOGISTICS INC"}  # dated 2026; the others 2025 or older
    filings = [r for r in rows if r["query_origin"]["bucket"] == "filings"]
    assert filings and all(r["gold"]["field"] == "revenue" for r in filings)
    ironwood = [r for r in filings if r["query_origin"]["provenance"]["ticker"] == "IRWD"]
    assert ironwood  # only the older SalesRevenueNet concept


def test_filingdoc_stops_at_the_target(world, run) -> None:
    tally = Tally()
    rows = asyncio.run(generate_sample(*world, suites=("filingdoc",), filingdoc_target=2,
                                       concurrency=1, tally=tally))
    assert [r["query_origin"]["syntax"] for r in rows] == ["plain", "site"]
    full = [r["gold"]["value"] for r in _rows(run, "filingdoc")]
    assert [r["gold"]["value"] for r in rows] == full[:2]
    assert tally.drops["surplus"] == 0  # one candidate at a time: nothing fetched in vain


def test_llm_failures_are_counted_not_fatal(world) -> None:
    tally = Tally()
    with FakeOpenAIServer("http500") as broken:
        rows = asyncio.run(generate_sample(world[0], broken, suites=("filingdoc",),
                                           tally=tally))
    assert rows == []
    assert tally.drops["llm_errors"] == 9  # every filing that reached the LLM


def test_a_429_with_retry_after_does_not_cost_the_company() -> None:
    path = "/api/xbrl/companyfacts/CIK0001000001.json"
    with FakeFinanceSources(throttle={path: 2}) as sources, FakeFilingLLM() as llm:
        tally = Tally()
        rows = asyncio.run(generate_sample(sources, llm, suites=("filings",), tally=tally))
        assert sources.paths(path) == [path] * 3
    assert any(r["query_origin"]["provenance"]["ticker"] == "ACMR" for r in rows)
    assert tally.drops["fetch_errors"] == 0


async def test_generate_refuses_incomplete_wiring(world) -> None:
    sec = SecClient(env=world[0].env(), sleep=no_wait)
    before = len(world[0].requests)
    with pytest.raises(ValueError, match="needs a Wikidata client"):
        await generate(Options(now=NOW, suites=("finance",)), sec=sec)
    with pytest.raises(ValueError, match="needs an LLM client"):
        await generate(Options(now=NOW, suites=("filingdoc",)), sec=sec)
    with pytest.raises(ValueError, match="unknown suite"):
        await generate(Options(now=NOW, suites=("stocks",)), sec=sec)
    await sec.aclose()
    assert len(world[0].requests) == before  # refused before fetching anything


# --- the command -------------------------------------------------------------------------

@pytest.fixture
def cli_env(world, monkeypatch):
    for name, value in world[0].env(NEEDLE_LLM_BASE_URL=world[1].url).items():
        monkeypatch.setenv(name, value)
    for name in ("OPENROUTER_API_KEY", "NEEDLE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return world


def test_cli_writes_rows_to_stdout(cli_env, capsys) -> None:
    code = main(["finance", "generate", "--suites", "filings", "--max-companies", "6",
                 "--seed", "3", "--out", "-"])
    out, err = capsys.readouterr()
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and all(r["query_origin"]["bucket"] == "filings" for r in rows)
    noun = "row" if len(rows) == 1 else "rows"
    assert f"wrote {len(rows)} {noun} to stdout (filings {len(rows)})" in err
    assert "seed 3" in err and "dropped: no facts" in err


def test_cli_skips_filingdoc_without_a_key_with_one_line(cli_env, capsys, tmp_path) -> None:
    out = tmp_path / "gold.jsonl"
    code = main(["finance", "generate", "--suites", "filingdoc,filings",
                 "--max-companies", "3", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    skipped = [line for line in err.splitlines() if "filingdoc skipped" in line]
    assert len(skipped) == 1 and "OPENROUTER_API_KEY" in skipped[0]
    buckets = {json.loads(line)["query_origin"]["bucket"] for line in out.read_text().split("\n")
               if line}
    assert buckets == {"filings"}


def test_cli_filingdoc_with_the_generation_llm(cli_env, capsys, monkeypatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "test-key")
    out = tmp_path / "gold.jsonl"
    code = main(["finance", "generate", "--suites", "filingdoc", "--max-companies", "36",
                 "--filingdoc-target", "3", "--seed", "1", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and {r["query_origin"]["bucket"] for r in rows} == {"filingdoc"}


def test_cli_missing_contact_fails_before_any_request(cli_env, capsys, monkeypatch) -> None:
    monkeypatch.delenv("NEEDLE_CONTACT")
    before = len(cli_env[0].requests)
    code = main(["finance", "generate", "--suites", "finance", "--out", "-"])
    assert code == 2
    assert "NEEDLE_CONTACT" in capsys.readouterr().err
    assert len(cli_env[0].requests) == before


@pytest.mark.parametrize(("flag", "value", "known"), [
    ("--suites", "finance,stocks", "finance, filings, filingdoc"),
    ("--fields", "net_income,ebitda", "revenue, net_income, operating_income, eps_diluted"),
])
def test_cli_unknown_csv_values_list_the_known_ones(capsys, flag, value, known) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["finance", "generate", flag, value, "--out", "-"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown value(s)" in err and known in err
