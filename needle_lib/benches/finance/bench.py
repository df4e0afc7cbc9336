"""The finance bench as the known-item harness sees it: gold reader, matcher, report groups."""

from __future__ import annotations

from needle_lib.benches.finance.fields import FRESHNESS_LADDER
from needle_lib.benches.finance.match import FinanceGold, match_result
from needle_lib.benches.known_item import KnownItemBench
from needle_lib.jsonio import JSONObject, json_object


def finance_groups(row: JSONObject, gold: FinanceGold) -> dict[str, str]:
    origin = json_object(row.get("query_origin")) or {}
    return {
        "field": gold.field,
        "bucket": str(origin.get("bucket") or ""),
        "syntax": str(origin.get("syntax") or ""),
        "tier": gold.tier,
        "freshness": gold.freshness_window,
    }


FINANCE = KnownItemBench(
    name="finance",
    sources=("finance",),
    read_gold=FinanceGold.from_row,
    matcher=match_result,
    group_names=("field", "bucket", "syntax", "tier", "freshness"),
    row_groups=finance_groups,
    stratum_groups=("bucket", "syntax", "field"),
    group_orders={"freshness": FRESHNESS_LADDER},
    judge_backstop=True,
)
