"""The legal bench as the known-item harness sees it: gold reader, matcher, report groups."""

from __future__ import annotations

from needle_lib.benches.known_item import KnownItemBench
from needle_lib.benches.legal import code_query
from needle_lib.benches.legal.caption import COURT_PHRASES, DEFAULT_COURTS, SYNTAX_CYCLE
from needle_lib.benches.legal.generate import SUITES
from needle_lib.benches.legal.match import LegalGold, match_result
from needle_lib.jsonio import JSONObject, json_object


def legal_groups(row: JSONObject, gold: LegalGold) -> dict[str, str]:
    """``suite`` from the row (NEEDLE calls it ``bucket``), else from the gold's ids."""
    origin = json_object(row.get("query_origin")) or {}
    suite = origin.get("suite") or origin.get("bucket") or ("code" if gold.cfr else "caselaw")
    return {"suite": str(suite), "syntax": str(origin.get("syntax") or ""), "court": gold.court}


LEGAL = KnownItemBench(
    name="legal",
    sources=("legal",),
    read_gold=LegalGold.from_row,
    matcher=match_result,
    group_names=("suite", "syntax", "court"),
    row_groups=legal_groups,
    stratum_groups=("suite", "syntax"),
    group_orders={
        "suite": SUITES,
        "syntax": tuple(dict.fromkeys((*SYNTAX_CYCLE, *code_query.SYNTAX_CYCLE))),
        "court": (*DEFAULT_COURTS, *(c for c in COURT_PHRASES if c not in DEFAULT_COURTS)),
    },
)
