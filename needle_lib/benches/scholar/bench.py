"""The scholar bench as the known-item harness sees it: gold reader, id matcher, report groups.

The point of the report is the breakdowns: ``by_bucket`` (the same papers found by their
title, a full-text detail, a question, a vague memory) and ``by_age`` (last week's paper vs
last year's: how fresh an engine's index is).
"""

from __future__ import annotations

from needle_lib.benches.known_item import KnownItemBench
from needle_lib.benches.scholar.buckets import BUCKETS
from needle_lib.benches.scholar.match import ScholarGold, match_result
from needle_lib.benches.scholar.papers import AGE_BUCKETS, DOMAINS
from needle_lib.jsonio import JSONObject, json_object


def scholar_groups(row: JSONObject, gold: ScholarGold) -> dict[str, str]:
    origin = json_object(row.get("query_origin")) or {}
    return {
        "bucket": str(origin.get("bucket") or ""),
        "age": gold.age_bucket,
        "domain": gold.domain,
        "suite": str(origin.get("suite") or ""),
    }


SCHOLAR = KnownItemBench(
    name="scholar",
    sources=("scholar",),
    read_gold=ScholarGold.from_row,
    matcher=match_result,
    group_names=("bucket", "age", "domain", "suite"),
    row_groups=scholar_groups,
    stratum_groups=("bucket", "age"),
    group_orders={"bucket": BUCKETS, "age": AGE_BUCKETS, "domain": DOMAINS},
    default_num_results=10,
)
