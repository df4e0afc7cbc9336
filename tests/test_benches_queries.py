"""Query sets: JSONL and plain text loading, row errors, deterministic stratified sampling."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.benches.queries import Query, load_queries, sample_queries
from needle_lib.tomlconf import ConfigError


def test_plain_text_one_query_per_line(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("first query\n\n  second query  \n")
    queries = load_queries(path)
    assert [q.query for q in queries] == ["first query", "second query"]
    assert len({q.query_id for q in queries}) == 2
    assert load_queries(path) == queries  # ids are derived from the text, not the order


def test_jsonl_rows_keep_their_fields_and_stratum(tmp_path):
    path = tmp_path / "gold.jsonl"
    rows = [{"query_id": "a", "query": "x", "length_bucket": "short"},
            {"query_id": 7, "query": "y", "extra": 1}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    a, b = load_queries(path)
    assert (a.query_id, a.stratum, b.query_id, b.row["extra"]) == ("a", "short", "7", 1)


@pytest.mark.parametrize("line, message", [
    ('{"query_id": "a"', "not a JSON object"),
    ('["a", "b"]', "expected a JSON object"),
    ('{"query_id": "a", "query": ""}', "no 'query_text'"),
    ('{"query_id": "a", "query_text": "x", "gold": "{oops"}', "'gold' is a string but not JSON"),
    ('{"query": "text"}', "no 'query_id'"),
    ('{"query_id": "ok", "query": "again"}', "duplicate query_id 'ok'"),
])
def test_malformed_rows_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"query_id": "ok", "query": "fine"}\n' + line + "\n")
    with pytest.raises(ConfigError, match=rf"gold\.jsonl:2: .*{message}"):
        load_queries(path)


def test_needle_rows_decode_string_fields(tmp_path):
    path = tmp_path / "needle.jsonl"
    row = {"query_id": "9b_2026-07-02T14", "query_text": "nvidia ceo", "query_source": "finance",
           "query_origin": json.dumps({"bucket": "finance", "syntax": "plain"}),
           "gold": {"field": "ceo", "value": "Jensen Huang"}}
    path.write_text(json.dumps(row) + "\n")
    (query,) = load_queries(path)
    assert (query.query, query.source, query.where) == ("nvidia ceo", "finance", f"{path}:1")
    assert query.origin == {"bucket": "finance", "syntax": "plain"}
    assert query.gold["value"] == "Jensen Huang"


def test_unreadable_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.jsonl"):
        load_queries(tmp_path / "missing.jsonl")


def _queries(strata: list[str]) -> list[Query]:
    return [Query(str(i), f"q{i}", s) for i, s in enumerate(strata)]


@given(st.lists(st.sampled_from(["short", "medium", "long"]), min_size=1, max_size=60),
       st.integers(min_value=1, max_value=60), st.integers(0, 10))
def test_sampling_is_deterministic_proportional_and_ordered(strata, n, seed):
    queries = _queries(strata)
    picked = sample_queries(queries, sample=n, seed=seed, limit=None)
    assert picked == sample_queries(queries, sample=n, seed=seed, limit=None)
    assert len(picked) == min(n, len(queries))
    assert [int(q.query_id) for q in picked] == sorted(int(q.query_id) for q in picked)
    have, total = Counter(q.stratum for q in picked), Counter(strata)
    for stratum, count in total.items():
        share = len(picked) * count / len(queries)
        assert abs(have[stratum] - share) < 1 + 1e-9  # largest-remainder apportionment


def test_limit_applies_after_sampling():
    queries = _queries(["a"] * 10)
    assert len(sample_queries(queries, sample=None, seed=0, limit=3)) == 3
    assert sample_queries(queries, sample=None, seed=0, limit=None) == queries
