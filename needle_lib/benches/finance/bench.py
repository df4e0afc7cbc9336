"""The finance bench as the known-item harness sees it: gold reader, matcher, report groups."""

from __future__ import annotations

from typing import Any, ClassVar

from needle_lib.benches.finance.fields import FRESHNESS_LADDER
from needle_lib.benches.finance.match import FinanceGold, match_result
from needle_lib.benches.known_item import KnownItemBench, Match
from needle_lib.search.types import SearchResult


class FinanceBench(KnownItemBench):
    name = "finance"
    sources = ("finance",)
    group_names = ("field", "bucket", "syntax", "tier", "freshness")
    group_orders: ClassVar[dict[str, tuple[str, ...]]] = {"freshness": FRESHNESS_LADDER}
    judge_backstop = True

    def parse_gold(self, gold: Any) -> FinanceGold:
        return FinanceGold.from_row(gold)

    def match(self, gold: FinanceGold, result: SearchResult) -> Match:
        return match_result(gold, title=result.title, snippet=result.snippet, url=result.url)

    def describe(self, gold: FinanceGold) -> str:
        return gold.describe()

    def groups(self, row: dict[str, Any], gold: FinanceGold) -> dict[str, str]:
        origin = row.get("query_origin") or {}
        return {
            "field": gold.field,
            "bucket": str(origin.get("bucket") or ""),
            "syntax": str(origin.get("syntax") or ""),
            "tier": gold.tier,
            "freshness": gold.freshness_window,
        }

    def stratum(self, row: dict[str, Any], gold: FinanceGold) -> str:
        groups = self.groups(row, gold)
        return f"{groups['bucket']}:{groups['syntax']}:{groups['field']}"
