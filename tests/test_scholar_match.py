"""The scholar matcher: every id extractor as a table, gold parsing, and match verdicts."""

from __future__ import annotations

import json

import pytest

from needle_lib.benches.queries import load_queries
from needle_lib.benches.registry import bench_named, select_queries
from needle_lib.benches.scholar.match import (
    GoldError,
    ScholarGold,
    clean_doi,
    extract_ids,
    match_result,
)
from needle_lib.search.types import SearchResult
from needle_lib.tomlconf import ConfigError


def ids_of(url="", title="", snippet=""):
    return extract_ids(url=url, title=title, snippet=snippet)


@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://arxiv.org/abs/2401.01234v3", "", {"2401.01234"}),
    ("https://arxiv.org/pdf/2401.01234v2.pdf", "", {"2401.01234"}),
    ("https://arxiv.org/pdf/2401.01234", "", {"2401.01234"}),
    ("https://arxiv.org/html/2401.01234v1#S2", "", {"2401.01234"}),
    ("https://export.arxiv.org/abs/2401.0123", "", {"2401.0123"}),
    ("https://arxiv.org/abs/hep-th/9901001v1", "", {"hep-th/9901001"}),
    ("", "see arXiv:2401.01234v2 for details", {"2401.01234"}),
    ("", "Preprint, arXiv 2401.01234.", {"2401.01234"}),
    ("", "arXiv:math.GT/0309136", {"math/0309136"}),
    ("https://doi.org/10.48550/arXiv.2401.01234", "", {"2401.01234"}),
    ("", "DOI 10.48550/ARXIV.2401.01234", {"2401.01234"}),
    ("https://arxiv.org/abs/2401.123456", "", set()),        # not an arXiv id: 6 digits
    ("https://www.alphaxiv.org/overview/2401.01234", "", set()),  # not arxiv.org
    ("", "arxiv sanity 2024", set()),
])
def test_arxiv_ids_from_urls_mentions_and_dois(url, text, expected):
    assert ids_of(url, snippet=text).get("arxiv", set()) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("10.1038/s41586-024-07000-1", "10.1038/s41586-024-07000-1"),
    ("10.3389/fpubh.2026.1234567/full", "10.3389/fpubh.2026.1234567"),
    ("10.3389/fpubh.2026.1234567/pdf", "10.3389/fpubh.2026.1234567"),
    ("10.1002/anie.202400001/abstract", "10.1002/anie.202400001"),
    ("10.1007/s00134-024-07301-1.pdf", "10.1007/s00134-024-07301-1"),
    ("10.1007/s00134-024-07301-1/fulltext.html", "10.1007/s00134-024-07301-1"),
    ("10.1101/2026.11.01.123456v2.full.pdf", "10.1101/2026.11.01.123456"),
    ("10.1101/2026.11.01.123456v1", "10.1101/2026.11.01.123456"),
    ("10.1016/J.JPUBECO.2026.105000.", "10.1016/j.jpubeco.2026.105000"),
    ("10.1016/S0140-6736(24)00001-1", "10.1016/s0140-6736(24)00001-1"),
    ("10.1016/S0140-6736(24)00001-1)", "10.1016/s0140-6736(24)00001-1"),
    ("10.1000/xyz123,", "10.1000/xyz123"),
])
def test_doi_cleaning_strips_publisher_suffixes_and_sentence_punctuation(raw, expected):
    assert clean_doi(raw) == expected


@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://doi.org/10.1038/s41586-024-07000-1", "", {"10.1038/s41586-024-07000-1"}),
    ("https://www.frontiersin.org/articles/10.3389/fpubh.2026.1234567/full", "",
     {"10.3389/fpubh.2026.1234567"}),
    ("https://onlinelibrary.wiley.com/doi/epdf/10.1002/anie.202400001", "",
     {"10.1002/anie.202400001"}),
    ("https://link.springer.com/content/pdf/10.1007/s00134-024-07301-1.pdf", "",
     {"10.1007/s00134-024-07301-1"}),
    ("https://www.biorxiv.org/content/10.1101/2026.11.01.123456v2.full", "",
     {"10.1101/2026.11.01.123456"}),
    ("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0301234&type=pr", "",
     {"10.1371/journal.pone.0301234"}),
    ("https://example.org/cite?doi=10.1038%2Fs41586-024-07000-1", "",
     {"10.1038/s41586-024-07000-1"}),
    ("", "(doi: 10.1016/J.JPUBECO.2026.105000).", {"10.1016/j.jpubeco.2026.105000"}),
    ("", "no identifiers here, 10.5 percent", set()),
])
def test_dois_in_urls_and_text(url, text, expected):
    assert ids_of(url, snippet=text).get("doi", set()) == expected


@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://pubmed.ncbi.nlm.nih.gov/41000001/", "", {"41000001"}),
    ("https://www.ncbi.nlm.nih.gov/pubmed/41000001", "", {"41000001"}),
    ("https://europepmc.org/article/MED/41000001", "", {"41000001"}),
    ("https://europepmc.org/abstract/med/41000001", "", {"41000001"}),
    ("", "Lancet. 2026. PMID: 41000001", {"41000001"}),
    ("", "PMID 41000001; PMCID: PMC12500001", {"41000001"}),
    ("https://example.org/41000001", "", set()),
])
def test_pmids_in_pubmed_and_europepmc_urls_and_text(url, text, expected):
    assert ids_of(url, snippet=text).get("pmid", set()) == expected


@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC12500002/", "", {"12500002"}),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC12500002/", "", {"12500002"}),
    ("https://europepmc.org/article/PMC/PMC12500002", "", {"12500002"}),
    ("https://europepmc.org/articles/PMC12500002", "", {"12500002"}),
    ("", "PMCID: PMC12500002", {"12500002"}),
    ("", "the PMC team", set()),
])
def test_pmc_links_yield_pmcids(url, text, expected):
    assert ids_of(url, snippet=text).get("pmcid", set()) == expected


def gold(**ids):
    return ScholarGold.from_row({"ids": ids, "age_bucket": "7d", "domain": "health sciences"})


@pytest.mark.parametrize(("gold_ids", "url", "snippet", "why"), [
    ({"arxiv": "2401.01234"}, "https://arxiv.org/pdf/2401.01234v4", "", "arxiv 2401.01234"),
    ({"arxiv": "2401.01234v1"}, "https://example.org", "arXiv:2401.01234", "arxiv 2401.01234"),
    ({"doi": "https://doi.org/10.1101/2026.11.01.123456"},
     "https://www.biorxiv.org/content/10.1101/2026.11.01.123456v2.full", "",
     "doi 10.1101/2026.11.01.123456"),
    ({"pmid": 41000001}, "https://europepmc.org/article/MED/41000001", "", "pmid 41000001"),
    ({"pmid": "41000002", "pmcid": "PMC12500002"},
     "https://pmc.ncbi.nlm.nih.gov/articles/PMC12500002/", "", "pmcid 12500002"),
])
def test_a_gold_id_anywhere_is_a_hit_and_says_which(gold_ids, url, snippet, why):
    match = match_result(gold(**gold_ids), title="", snippet=snippet, url=url)
    assert match.matched and match.why == why


def test_a_miss_lists_the_ids_it_found_or_says_there_were_none():
    g = gold(arxiv="2401.01234", doi="10.1234/x")
    other = match_result(g, title="Neighbour", url="https://arxiv.org/abs/2401.01235",
                         snippet="doi:10.5678/y")
    assert not other.matched
    assert other.why == "other paper ids: arxiv 2401.01235; doi 10.5678/y"
    bare = match_result(g, title="A blog post", snippet="about the paper", url="https://x.org")
    assert (bare.matched, bare.why) == (False, "no paper id in URL, title or snippet")


def test_a_needle_made_row_without_pmcid_says_pmc_links_cannot_match_it():
    """NEEDLE's files carry the PMID only; its PMC link is the paper, but not comparable."""
    needle_row = gold(pmid="41000002")
    assert needle_row.pmc_blind and not gold(pmid="41000002", pmcid="PMC12500002").pmc_blind
    miss = match_result(needle_row, title="", snippet="",
                        url="https://pmc.ncbi.nlm.nih.gov/articles/PMC12500002/")
    assert not miss.matched
    assert "no pmcid" in miss.why and "pmcid 12500002" in miss.why


def test_the_title_text_alone_is_never_a_hit():
    g = gold(arxiv="2401.01234")
    title = "Tidal Lexicons: Tracking Dialect Drift in Coastal Radio Transcripts"
    assert not match_result(g, title=title, snippet=title, url="https://blog.example/").matched


@pytest.mark.parametrize(("value", "message"), [
    ("not a dict", "must be an object"),
    ({"ids": {}}, "non-empty object"),
    ({"ids": {"isbn": "123"}}, "gold id kind 'isbn' is unknown; known: arxiv, doi, pmid, pmcid"),
    ({"ids": {"doi": "not-a-doi"}}, "gold id doi 'not-a-doi' is not a valid doi"),
    ({"ids": {"pmid": ["1"]}}, "must be a string"),
    ({"ids": {"arxiv": ""}}, "no usable id"),
])
def test_malformed_gold_is_an_error_naming_what_is_wrong(value, message):
    with pytest.raises(GoldError, match=message):
        ScholarGold.from_row(value)


NEEDLE_ROW = (
    '{"query_id":"0e7b31bbf114e813_2026-07-02T14","query_hash":"0e7b31bbf114e813",'
    '"query_text":"smoothquant accurate and efficient post training quantization",'
    '"query_source":"scholar",'
    '"query_origin":"{\\"bucket\\": \\"title\\", \\"provenance\\": {\\"published_date\\": '
    '\\"2026-06-28\\", \\"suite\\": \\"arxiv\\", \\"title\\": \\"SmoothQuant\\", \\"url\\": '
    '\\"https://arxiv.org/abs/2606.12345\\"}, \\"suite\\": \\"arxiv\\"}",'
    '"gold":"{\\"age_bucket\\": \\"7d\\", \\"domain\\": \\"computer science\\", \\"ids\\": '
    '{\\"arxiv\\": \\"2606.12345\\", \\"doi\\": \\"10.48550/arxiv.2606.12345\\"}, '
    '\\"paper_key\\": \\"2606.12345\\", \\"published_date\\": \\"2026-06-28\\"}",'
    '"hour_ts":"2026-07-02T14:00:00+00:00"}'
)


def test_a_row_in_needles_shape_loads_with_json_string_gold_and_groups(tmp_path):
    path = tmp_path / "needle.jsonl"
    path.write_text(NEEDLE_ROW + "\n")
    bench = bench_named("scholar")
    (query,) = select_queries(bench, load_queries(path))
    parsed = bench.parse_gold(query.gold)
    assert parsed.ids == {"arxiv": "2606.12345", "doi": "10.48550/arxiv.2606.12345"}
    assert bench.groups(query.row, parsed) == {"bucket": "title", "age": "7d",
                                               "domain": "computer science", "suite": "arxiv"}
    assert query.stratum == "title:7d"
    hit = bench.match(parsed, SearchResult("https://arxiv.org/abs/2606.12345v2", "x", ""))
    assert hit.matched


def test_a_bad_scholar_row_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    row = json.loads(NEEDLE_ROW)
    path.write_text(NEEDLE_ROW + "\n" + json.dumps({**row, "query_id": "q2",
                                                     "gold": {"ids": {}}}) + "\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: scholar gold: .*non-empty"):
        select_queries(bench_named("scholar"), load_queries(path))


def test_bench_defaults_and_report_groups():
    bench = bench_named("scholar")
    assert bench.default_num_results == 10
    assert bench.group_names == ("bucket", "age", "domain", "suite")
    assert bench.group_orders["bucket"] == ("title", "body", "clue", "tot")
    assert bench.group_orders["age"][:3] == ("7d", "30d", "1y")
