"""The legal bench as the known-item harness sees it: gold reader, matcher, report groups."""

from __future__ import annotations

from typing import Any, ClassVar

from needle_lib.benches.known_item import KnownItemBench, Match
from needle_lib.benches.legal import code_query
from needle_lib.benches.legal.caption import COURT_PHRASES, DEFAULT_COURTS, SYNTAX_CYCLE
from needle_lib.benches.legal.generate import SUITES
from needle_lib.benches.legal.match import LegalGold, match_result
from needle_lib.search.types import SearchResult


class LegalBench(KnownItemBench):
    name = "legal"
    sources = ("legal",)
    group_names = ("suite", "syntax", "court")
    group_orders: ClassVar[dict[str, tuple[str, ...]]] = {
        "suite": SUITES,
        "syntax": tuple(dict.fromkeys((*SYNTAX_CYCLE, *code_query.SYNTAX_CYCLE))),
        "court": (*DEFAULT_COURTS, *(c for c in COURT_PHRASES if c not in DEFAULT_COURTS)),
    }

    def parse_gold(self, gold: Any) -> LegalGold:
        return LegalGold.from_row(gold)

    def match(self, gold: LegalGold, result: SearchResult) -> Match:
        return match_result(gold, title=result.title, snippet=result.snippet, url=result.url)

    def describe(self, gold: LegalGold) -> str:
        return gold.describe()

    def groups(self, row: dict[str, Any], gold: LegalGold) -> dict[str, str]:
        """``suite`` from the row (NEEDLE calls it ``bucket``), else from the gold's ids."""
        origin = row.get("query_origin") or {}
        suite = origin.get("suite") or origin.get("bucket") or ("code" if gold.cfr
                                                                else "caselaw")
        return {"suite": str(suite), "syntax": str(origin.get("syntax") or ""),
                "court": gold.court}

    def stratum(self, row: dict[str, Any], gold: LegalGold) -> str:
        groups = self.groups(row, gold)
        return f"{groups['suite']}:{groups['syntax']}"
