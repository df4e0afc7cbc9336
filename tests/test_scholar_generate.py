"""Scholar generation from loopback fakes: paired retention, drops and their reasons, gold
ids (PMIDs from NCBI's converter), determinism, failing sources, and the CLI."""

from __future__ import annotations

import asyncio
import io
import json
from collections import Counter

import pytest
from scholar_fakes import run_generate

from needle_lib.benches.rows import query_hash
from needle_lib.cli import main
from needle_lib.clock import NOW_ENV
from needle_lib.testing.loopback import closed_port_url
from needle_lib.testing.scholar_papers import A1, A2, A3, A4, A6, CORPUS, E2, KEPT, NOW
from needle_lib.testing.scholar_sources import FakeScholarSources

TITLES = {p.title: p for p in CORPUS}


@pytest.fixture(scope="module")
def server():
    with FakeScholarSources(CORPUS, NOW) as running:
        yield running


@pytest.fixture
def fake(server, monkeypatch):
    """The module's server with fresh counters and every source up."""
    server.requests.clear()
    server.failing = set()
    monkeypatch.setenv("OPENROUTER_API_KEY", "fake-llm-key")  # the LLM client reads its key
    return server                                              # from the process environment


@pytest.fixture(scope="module")
def generated(server):
    """One default generation from the fakes, shared by the tests that only read it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENROUTER_API_KEY", "fake-llm-key")
        server.requests.clear()
        rows, tally, _ = asyncio.run(run_generate(server.env()))
    return rows, tally


def papers_of(rows):
    counts = Counter(row["query_origin"]["provenance"]["title"] for row in rows)
    return {TITLES[title]: n for title, n in counts.items()}


def test_a_paper_stays_only_when_every_bucket_passes(generated):
    rows, tally = generated
    assert papers_of(rows) == {paper: 4 for paper in KEPT}
    # A2's body and clue passed, its tot did not: none of its queries is kept
    assert A2 not in papers_of(rows)
    assert tally.drops == Counter({"tot_leak": 1, "body_leak": 1, "no_body": 1,
                                   "generic_title": 1, "clue_llm_error": 1})
    assert "exact value '0.5'" in tally.samples["tot_leak"]
    assert "HTTP 404" in tally.samples["no_body"]
    summary = tally.summary()
    assert summary.startswith("kept 6 papers (title 6, body 6, clue 6, tot 6); dropped 5: ")
    assert "short cells 15: " in summary and "computer science/7d 1/2" in summary
    assert "requests: arxiv 64, arxiv-html 7, europepmc 19, ncbi 1, llm 24" in summary


def test_rows_carry_needles_fields_and_complete_gold(generated):
    rows, _ = generated
    by = {(TITLES[r["query_origin"]["provenance"]["title"]], r["query_origin"]["bucket"]): r
          for r in rows}
    a1 = by[(A1, "clue")]
    assert a1["query_text"] == A1.answers["clue"]
    assert a1["query_id"] == f"{query_hash(A1.answers['clue'])}_2026-11-29T12"
    assert a1["query_source"] == "scholar" and a1["hour_ts"] == "2026-11-29T12:00:00+00:00"
    assert a1["query_origin"] == {
        "bucket": "clue", "suite": "arxiv",
        "provenance": {"suite": "arxiv", "title": A1.title,
                       "url": "https://arxiv.org/abs/2611.01234", "published_date": "2026-11-27",
                       "llm_model": "fake-writer", "prompt_version": "scholar-1"}}
    assert a1["gold"] == {"paper_key": "2611.01234", "ids": {"arxiv": "2611.01234"},
                          "published_date": "2026-11-27", "age_bucket": "7d",
                          "domain": "computer science"}
    assert by[(A1, "title")]["query_text"] == \
        "tidal lexicons tracking dialect drift in coastal radio transcripts"
    # a cross-listed paper is labelled by its primary category's domain
    assert by[(A3, "title")]["gold"]["domain"] == "physical sciences"
    # a Europe PMC record without a PMID gets NCBI's, and keeps its PMCID
    assert by[(E2, "body")]["gold"]["ids"] == {"pmid": "41000002", "pmcid": "12500002"}
    assert by[(E2, "body")]["gold"]["age_bucket"] == "30d"
    assert by[(E2, "body")]["query_origin"]["provenance"]["url"] == \
        "https://europepmc.org/article/PMC/PMC12500002"


async def test_the_same_seed_and_sources_give_the_same_rows(fake, generated):
    again, _, _ = await run_generate(fake.env())
    assert again == generated[0]


async def test_title_only_needs_no_llm_and_no_full_text(fake, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY")
    rows, tally, _ = await run_generate(fake.env(), buckets=("title",))
    assert {r["query_origin"]["bucket"] for r in rows} == {"title"}
    assert {A2, A4, A6} <= set(papers_of(rows))  # nothing but the title to check
    assert fake.requests["llm"] == fake.requests["arxiv-html"] == 0
    assert fake.requests["europepmc-xml"] == 0 and tally.llm_calls == 0


async def test_a_failing_source_costs_its_cells_not_the_run(fake):
    fake.failing = {"europepmc"}
    rows, tally, time = await run_generate(fake.env())
    assert {r["query_origin"]["suite"] for r in rows} == {"arxiv"}
    assert len(papers_of(rows)) == 4
    # every window of the three health cells (7d: 4, 30d: 6, 1y: 6)
    assert tally.source_errors == Counter({"europepmc": 16})
    assert "source errors: europepmc 16 (e.g. europepmc: " in tally.summary()
    assert "HTTP 503" in tally.summary()
    assert 2.0 in time.sleeps  # retried from 2 s before giving up


async def test_the_progress_bar_counts_kept_papers_not_planned_ones(fake):
    fake.failing = {"europepmc", "arxiv"}
    bar = io.StringIO()
    rows, _, _ = await run_generate(fake.env(), stream=bar, buckets=("title",))
    assert rows == []
    last = bar.getvalue().splitlines()[-1]
    # 15 cells of 2 planned, nothing fetched: the bar ends empty, saying why
    assert "] 0/30" in last and "short cells 15" in last


def test_cli_on_an_unreachable_source_stops_at_once_naming_host_and_override(
        monkeypatch, tmp_path, capsys):
    url = closed_port_url()
    env = {f"NEEDLE_{name}_BASE_URL": url for name in ("ARXIV", "ARXIV_HTML", "EUROPEPMC", "NCBI")}
    out = tmp_path / "x.jsonl"
    code = cli(monkeypatch, env, "--buckets", "title", "--out", str(out))
    assert code == 1 and not out.exists()
    err = capsys.readouterr().err.splitlines()
    host = url.removeprefix("http://")
    assert err[-1].startswith("needle scholar generate: ")
    assert f"cannot reach {host} (connection refused)" in err[-1]
    assert "NEEDLE_ARXIV_BASE_URL" in err[-1] or "NEEDLE_EUROPEPMC_BASE_URL" in err[-1]
    assert not any("] " in line for line in err)  # stopped before the per-paper stage


async def test_a_failing_id_converter_keeps_the_paper_without_a_pmid(fake):
    fake.failing = {"ncbi"}
    rows, tally, _ = await run_generate(fake.env(), suites=("europepmc",))
    e2 = next(r for r in rows if r["query_origin"]["provenance"]["title"] == E2.title)
    assert e2["gold"]["ids"] == {"pmcid": "12500002"}
    assert tally.source_errors == Counter({"ncbi": 1})


def cli(monkeypatch, env, *args):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return main(["scholar", "generate", *args])


def test_cli_writes_rows_and_a_summary(monkeypatch, tmp_path, capsys):
    # the CLI dates windows from NEEDLE_NOW, so the fake dates papers from the same moment
    monkeypatch.setenv(NOW_ENV, NOW.isoformat())
    with FakeScholarSources(CORPUS, NOW) as server:
        out = tmp_path / "scholar.jsonl"
        code = cli(monkeypatch, server.env(), "--suites", "europepmc", "--per-cell", "1",
                   "--age-buckets", "7d,30d", "--seed", "3", "--out", str(out))
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert Counter(r["query_origin"]["bucket"] for r in rows) == {"title": 2, "body": 2,
                                                                  "clue": 2, "tot": 2}
    err = capsys.readouterr().err
    assert "needle scholar generate: seed 3, suites europepmc, ages 7d,30d" in err
    assert f"wrote 8 rows to {out}" in err and "kept 2 papers" in err


def test_cli_without_the_llm_says_how_to_run_title_only(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.setenv("NEEDLE_LLM_MODEL", "some/model")
    code = main(["scholar", "generate", "--out", str(tmp_path / "x.jsonl")])
    assert code == 2
    err = capsys.readouterr().err
    assert "buckets body,clue,tot need the generation LLM" in err
    assert "OPENROUTER_API_KEY" in err and "--buckets title" in err


def test_cli_unknown_values_list_the_known_ones(capsys):
    with pytest.raises(SystemExit):
        main(["scholar", "generate", "--age-buckets", "7d,2y", "--out", "-"])
    assert "unknown value(s) 2y; known values: 7d, 30d, 1y, older" in capsys.readouterr().err
