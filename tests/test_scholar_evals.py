"""End to end, offline: generate scholar gold from the loopback sources, then run
``pytest evals -k scholar`` against two loopback engines with crafted answers, and check the
hits per query and the ``by_bucket``/``by_age`` breakdowns of the report."""

from __future__ import annotations

import asyncio
import json

import pytest
from evalrun import case_labels, run_evals
from scholar_fakes import run_generate
from test_search_resume import assert_resume_asks_only_the_unanswered

from needle_lib.testing.scholar_papers import A1, A3, A5, A7, CORPUS, E1, E2, NOW
from needle_lib.testing.scholar_sources import FakeScholarSources
from needle_lib.testing.search_server import FakeSearchServer


def r(url, title, snippet=""):
    return {"url": url, "title": title, "snippet": snippet}


#: (engine, paper, bucket) → what the engine answers; anything else gets unrelated pages.
ANSWERS = {
    ("exa", A1, "title"): [r("https://blog.example/radio", "Radio dialects"),
                           r("https://arxiv.org/abs/2611.01234v3", "Tidal Lexicons")],
    ("exa", A1, "body"): [r("https://arxiv.org/pdf/2611.01234v1", "PDF")],
    ("exa", A1, "clue"): [r("https://scholar.example/x", "Tidal Lexicons",
                            "Preprint, arXiv:2611.01234.")],
    ("exa", A1, "tot"): [r("https://forum.example/t", "Seaside speech")],
    ("exa", A5, "title"): [r("https://www.biorxiv.org/content/10.1101/2026.11.01.123456v2.full",
                             "Hotspots")],
    ("exa", A7, "body"): [r("https://news.example/1", "Tax news"),
                          r("https://blog.example/2", "Bonds"),
                          r("https://www.sciencedirect.com/science/article/pii/S0047272726",
                            "Property tax salience", "doi: 10.1016/J.JPUBECO.2026.105000.")],
    ("exa", E1, "title"): [r("https://pubmed.ncbi.nlm.nih.gov/41000001/", "Heat waves")],
    ("exa", E2, "body"): [r("https://trials.example/overberg", "Overberg", "PMID: 41000002")],
    ("exa", E2, "clue"): [r("https://pmc.ncbi.nlm.nih.gov/articles/PMC12500002/", "Clinics")],
    ("brave", A1, "title"): [r("https://arxiv.org/abs/2611.01235", "A neighbouring paper")],
    ("brave", A3, "title"): [r("https://doi.org/10.48550/arXiv.2611.03456", "Random walks")],
    ("brave", E1, "tot"): [r("https://x.example/heat", "Heat"),
                           r("https://europepmc.org/article/MED/41000001", "Heat waves")],
    ("brave", A7, "tot"): 400,
}
EXA_HITS = {(A1, "title"): 2, (A1, "body"): 1, (A1, "clue"): 1, (A5, "title"): 1,
            (A7, "body"): 3, (E1, "title"): 1, (E2, "body"): 1, (E2, "clue"): 1}
BRAVE_HITS = {(A3, "title"): 1, (E1, "tot"): 2}


@pytest.fixture(scope="module")
def gold_rows():
    with FakeScholarSources(CORPUS, NOW) as sources, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENROUTER_API_KEY", "fake-llm-key")
        rows, _, _ = asyncio.run(run_generate(sources.env()))
    return rows


def paper_of(row):
    return next(p for p in CORPUS if p.title == row["query_origin"]["provenance"]["title"])


def key(row):
    return paper_of(row), row["query_origin"]["bucket"]


def needle_shape(row):
    """NEEDLE writes scholar ``query_origin`` and ``gold`` as JSON strings."""
    return {**row, "query_origin": json.dumps(row["query_origin"], sort_keys=True),
            "gold": json.dumps(row["gold"], sort_keys=True)}


@pytest.fixture
def engines(monkeypatch, tmp_path, gold_rows):
    script = {(engine, row["query_text"]): answer for row in gold_rows
              for (engine, paper, bucket), answer in ANSWERS.items()
              if key(row) == (paper, bucket)}
    assert len(script) == len(ANSWERS)
    with FakeSearchServer(script) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        yield server


def test_generated_gold_scores_crafted_engine_answers(pytester, tmp_path, gold_rows, engines):
    gold = tmp_path / "scholar.jsonl"
    lines = [needle_shape(row) if row["query_origin"]["suite"] == "europepmc" else row
             for row in gold_rows]
    gold.write_text("".join(json.dumps(row) + "\n" for row in lines))
    result = run_evals(pytester, tmp_path / "run", "--queries", str(gold),
                       "--engines", "exa,brave", "-p", "no:randomly", module="test_scholar.py")
    outcomes = result.parseoutcomes()
    assert (outcomes["passed"], outcomes["failed"], outcomes["errors"]) == (10, 37, 1)
    brave_a1 = next(row for row in gold_rows if key(row) == (A1, "title"))
    label = case_labels(gold)[brave_a1["query_id"]]
    assert label.startswith("tidal-lexicons-")  # ids read like the query, not its hash
    result.stdout.fnmatch_lines([
        f"*test_scholar?scholar-{label}-brave?*",
        "*gold: arxiv 2611.01234*",
        "*'A neighbouring paper' https://arxiv.org/abs/2611.01235*",
        "*other paper ids: arxiv 2611.01235*",
        "*needle scholar summary*", "*recall@10*MRR@10*",
    ])

    (path,) = (tmp_path / "run" / "search").glob("scholar__*.json")
    report = json.loads(path.read_text())
    assert report["k"] == 10 and report["num_queries"] == 24
    exa, brave, ultimate = (report["engines"][n] for n in ("exa", "brave", "ultimate"))
    by_id = {row["query_id"]: key(row) for row in gold_rows}
    assert {by_id[q["query_id"]]: q["hit_rank"] for q in exa["per_query"]
            if q["hit_rank"]} == EXA_HITS
    assert {by_id[q["query_id"]]: q["hit_rank"] for q in brave["per_query"]
            if q["hit_rank"]} == BRAVE_HITS

    assert (exa["num_scored"], exa["recall_at_k"]) == (24, 8 / 24)
    assert exa["mrr_at_k"] == pytest.approx((6 + 1 / 2 + 1 / 3) / 24)
    assert exa["by_bucket"] == {"title": {"n": 6, "recall_at_k": 3 / 6},
                                "body": {"n": 6, "recall_at_k": 3 / 6},
                                "clue": {"n": 6, "recall_at_k": 2 / 6},
                                "tot": {"n": 6, "recall_at_k": 0.0}}
    assert exa["by_age"] == {"7d": {"n": 12, "recall_at_k": 4 / 12},
                             "30d": {"n": 8, "recall_at_k": 3 / 8},
                             "1y": {"n": 4, "recall_at_k": 1 / 4}}
    assert exa["by_suite"] == {"arxiv": {"n": 16, "recall_at_k": 5 / 16},
                               "europepmc": {"n": 8, "recall_at_k": 3 / 8}}
    assert list(exa["by_domain"]) == ["computer science", "physical sciences", "life sciences",
                                      "social sciences", "health sciences"]
    assert (exa["misses_system_specific"], exa["misses_universal"]) == (2, 14)

    assert (brave["num_scored"], brave["search_errors"], brave["recall_at_k"]) == (23, 1, 2 / 23)
    assert brave["by_bucket"]["tot"] == {"n": 5, "recall_at_k": 1 / 5}
    assert (ultimate["recall_at_k"], ultimate["num_scored"]) == (10 / 24, 24)
    assert ultimate["by_bucket"]["title"] == {"n": 6, "recall_at_k": 4 / 6}


def test_resume_searches_only_the_errored_case(pytester, tmp_path, gold_rows, engines):
    gold = tmp_path / "scholar.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in gold_rows))
    args = ("--queries", str(gold), "--engines", "exa,brave", "-p", "no:randomly")
    run_evals(pytester, tmp_path / "run", *args, module="test_scholar.py")
    assert_resume_asks_only_the_unanswered(pytester, tmp_path / "run", "scholar", engines,
                                           *args, module="test_scholar.py")
