"""The scholar bench as the known-item harness sees it: gold reader, id matcher, report groups.

The point of the report is the breakdowns: ``by_bucket`` (the same papers found by their
title, a full-text detail, a question, a vague memory) and ``by_age`` (last week's paper vs
last year's: how fresh an engine's index is).
"""

from __future__ import annotations

from typing import Any, ClassVar

from needle_lib.benches.known_item import KnownItemBench, Match
from needle_lib.benches.scholar.buckets import BUCKETS
from needle_lib.benches.scholar.match import ScholarGold, match_result
from needle_lib.benches.scholar.papers import AGE_BUCKETS, DOMAINS
from needle_lib.search.types import SearchResult


class ScholarBench(KnownItemBench):
    name = "scholar"
    sources = ("scholar",)
    group_names = ("bucket", "age", "domain", "suite")
    group_orders: ClassVar[dict[str, tuple[str, ...]]] = {
        "bucket": BUCKETS, "age": AGE_BUCKETS, "domain": DOMAINS,
    }
    default_num_results = 10

    def parse_gold(self, gold: Any) -> ScholarGold:
        return ScholarGold.from_row(gold)

    def match(self, gold: ScholarGold, result: SearchResult) -> Match:
        return match_result(gold, title=result.title, snippet=result.snippet, url=result.url)

    def describe(self, gold: ScholarGold) -> str:
        return gold.describe()

    def groups(self, row: dict[str, Any], gold: ScholarGold) -> dict[str, str]:
        origin = row.get("query_origin") or {}
        return {
            "bucket": str(origin.get("bucket") or ""),
            "age": gold.age_bucket,
            "domain": gold.domain,
            "suite": str(origin.get("suite") or ""),
        }

    def stratum(self, row: dict[str, Any], gold: ScholarGold) -> str:
        groups = self.groups(row, gold)
        return f"{groups['bucket']}:{groups['age']}"
