"""Gold rows as the generators declare them (``generate.*Row``) read back through each
bench's reader; a row written elsewhere with a wrong shape is an error naming the field."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from needle_lib.benches.finance.bench import FINANCE
from needle_lib.benches.finance.generate import Fact, gold_row
from needle_lib.benches.finance.sources import Company
from needle_lib.benches.generation import Stamp
from needle_lib.benches.legal import generate as legal
from needle_lib.benches.legal.bench import LEGAL
from needle_lib.benches.legal.caption import caption_query
from needle_lib.benches.legal.sources import Case
from needle_lib.benches.scholar import generate as scholar
from needle_lib.benches.scholar.bench import SCHOLAR
from needle_lib.benches.scholar.papers import Paper
from needle_lib.errors import GoldError
from needle_lib.jsonio import JSON, JSONObject

NOW = datetime(2026, 6, 3, 14, 25, tzinfo=UTC)
STAMP = Stamp(NOW)


def _as_read(row: object) -> JSONObject:
    """The row as a query file hands it to a reader: through JSON text."""
    value = json.loads(json.dumps(row))
    assert isinstance(value, dict)
    return value


def test_a_legal_row_reads_back_as_its_gold_and_groups() -> None:
    case = Case(123, "ca9", "Fresh Mix, LLC v. Pisanelli Bice PLLC", date(2026, 5, 12),
                "25-1", ("1 F.4th 2",), "/opinion/123/x/")
    query = caption_query(case.case_name, "ca9")
    assert query is not None
    row = _as_read(legal._case_row(STAMP, case, query, "quoted"))
    gold = LEGAL.parse_gold(row["gold"])
    assert (gold.cluster, gold.docket, gold.cites, gold.court) == ("123", "25-1",
                                                                   ("1 F.4th 2",), "ca9")
    assert LEGAL.groups(row, gold) == {"suite": "caselaw", "syntax": "quoted", "court": "ca9"}


def test_a_finance_row_reads_back_as_its_gold_and_groups() -> None:
    company = Company(1000001, "ACMR", "ACME ROBOTICS INC", tier="mid")
    fact = Fact("founded_year", 1987, (), "wikidata", "https://www.wikidata.org/wiki/Q1")
    row = _as_read(gold_row(STAMP, company, text="acme robotics founded", bucket="finance",
                            syntax="plain", fact=fact, extra={"qid": "Q1"}))
    gold = FINANCE.parse_gold(row["gold"])
    assert (gold.field, gold.value, gold.tier) == ("founded_year", 1987, "mid")
    assert FINANCE.groups(row, gold)["bucket"] == "finance"


def test_a_scholar_row_reads_back_as_its_gold_and_groups() -> None:
    paper = Paper(suite="arxiv", title="A Paper", abstract="abs", published=NOW,
                  url="https://arxiv.org/abs/2601.00001", domain="physics",
                  arxiv="2601.00001", authors=("A",))
    row = _as_read(scholar.gold_row(paper, "title", "a paper",
                                    options=scholar.Options(now=NOW, seed=1), model=None))
    gold = SCHOLAR.parse_gold(row["gold"])
    assert gold.ids == {"arxiv": "2601.00001"}
    assert SCHOLAR.groups(row, gold)["bucket"] == "title"


@pytest.mark.parametrize("origin", ["caselaw", ["caselaw"], 7, None])
def test_an_origin_that_is_not_an_object_groups_as_unknown(origin: JSON) -> None:
    gold = LEGAL.parse_gold({"ids": {"cluster": "9"}, "court": "ca9"})
    row: JSONObject = {"query_id": "q", "query_origin": origin}
    assert LEGAL.groups(row, gold) == {"suite": "caselaw", "syntax": "", "court": "ca9"}


@pytest.mark.parametrize(("gold", "message"), [
    ({"field": "ceo", "field_type": "person", "value": {"name": "X"}}, "'value' must be a "
                                                                       "string or a number"),
    ({"field": "ceo", "field_type": "person", "value": "X", "aliases": [["Y"]]},
     "alias must be a string or a number"),
    ({"field": "ceo", "field_type": ["person"], "value": "X"}, "unknown field_type"),
])
def test_finance_gold_of_the_wrong_shape_names_the_field(gold: JSON, message: str) -> None:
    with pytest.raises(GoldError, match=message):
        FINANCE.parse_gold(gold)


@pytest.mark.parametrize(("gold", "message"), [
    ({"ids": {"cluster": True}}, "gold 'cluster' must be a string"),
    ({"ids": {"cites": ["1 F.4th 2", {"vol": 1}]}}, "gold 'cites' must be a string"),
    ({"ids": {"cluster": "9"}, "party_tokens": ["acme", 3]}, "'party_tokens' must be a list"),
])
def test_legal_gold_of_the_wrong_shape_names_the_field(gold: JSON, message: str) -> None:
    with pytest.raises(GoldError, match=message):
        LEGAL.parse_gold(gold)


def test_scholar_gold_of_the_wrong_shape_names_the_field() -> None:
    with pytest.raises(GoldError, match="gold id doi must be a string"):
        SCHOLAR.parse_gold({"ids": {"doi": True}})
