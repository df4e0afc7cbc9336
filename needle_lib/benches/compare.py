"""Two runs of one search bench, query by query: which (query, engine) results flipped.

A search report pools its figures over queries; a reviewer comparing two runs (a new
engine version, another day) wants the queries that moved. A case is keyed by query id and
engine; only cases decided in both runs (passed or failed) can flip, as in a recall
comparison. Runs of different benches are refused; runs over different query files are
compared on the queries they share, with a warning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from needle_lib.benches.runfiles import read_run
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import SearchCaseRecord
from needle_lib.contract.schema import SearchRun
from needle_lib.contract.setup import mode_differences
from needle_lib.dashboard.paired import ComparisonError
from needle_lib.metrics.flips import Flip, Verdict, find_flips
from needle_lib.report.html import decided_case_score


@dataclass(frozen=True)
class SearchComparison:
    """B against A on the (query, engine) cases both decided."""

    a: Path
    b: Path
    bench: str
    shared: int
    only_a: int  # decided in A only (missing, errored or skipped in B)
    only_b: int
    flips: list[Flip]
    cases: tuple[dict[str, SearchCaseRecord], dict[str, SearchCaseRecord]]  # key → case, A and B
    warnings: list[str]

    def flip_json(self, flip: Flip) -> dict[str, str]:
        case = self.cases[0][flip.key]
        return {"query_id": case["query_id"], "query": case["query"],
                "engine": case["engine"], **flip.to_json()}

    def to_json(self) -> dict[str, object]:
        return {"a": {"path": str(self.a)}, "b": {"path": str(self.b)}, "bench": self.bench,
                "shared_cases": self.shared, "only_a": self.only_a, "only_b": self.only_b,
                "flips": [self.flip_json(f) for f in self.flips], "warnings": self.warnings}


def case_key(case: SearchCaseRecord) -> str:
    return f"{case['engine']} · {case['query_id']}"


def _decided(cases: Iterable[SearchCaseRecord]) -> dict[str, SearchCaseRecord]:
    return {case_key(c): c for c in cases if c.get("outcome") in (Outcome.PASSED,
                                                                   Outcome.FAILED)}


def _verdicts(cases: dict[str, SearchCaseRecord]) -> dict[str, Verdict]:
    return {key: Verdict(c["outcome"] == Outcome.PASSED, decided_case_score(c) or
                         str(c["outcome"])) for key, c in cases.items()}


def compare_reports(a: Path, b: Path) -> SearchComparison:
    """Read two search reports (or journals) and list the cases whose verdict flipped."""
    return compare_search_runs(a, read_run(a), b, read_run(b))


def compare_search_runs(a: Path, run_a: SearchRun, b: Path, run_b: SearchRun
                        ) -> SearchComparison:
    """The cases whose verdict flipped from ``run_a`` (read from ``a``) to ``run_b``."""
    (head_a, cases_a), (head_b, cases_b) = run_a, run_b
    if head_a["bench"] != head_b["bench"]:
        raise ComparisonError(f"benches differ: {a.name} is {head_a['bench']}, {b.name} is "
                              f"{head_b['bench']}; their queries are not the same")
    warnings = []
    sha = (head_a["queries"].get("sha256"), head_b["queries"].get("sha256"))
    if sha[0] != sha[1]:
        warnings.append(f"query files differ ({a.name}: {head_a['queries'].get('path')}, "
                        f"{b.name}: {head_b['queries'].get('path')}); only queries in "
                        "both are compared")
    warnings += [f"an engine ran in another mode (its cases are another setup): "
                 f"{diff.describe((a.name, b.name))}" for diff in mode_differences(head_a, head_b)]
    decided = (_decided(cases_a), _decided(cases_b))
    shared = decided[0].keys() & decided[1].keys()
    if not shared:
        raise ComparisonError(f"no (query, engine) case is decided in both {a.name} and "
                              f"{b.name}")
    return SearchComparison(
        a=a, b=b, bench=head_a["bench"], shared=len(shared),
        only_a=len(decided[0].keys() - shared), only_b=len(decided[1].keys() - shared),
        flips=find_flips(_verdicts(decided[0]), _verdicts(decided[1])),
        cases=decided, warnings=warnings)
