"""Controller-side search reports: one NEEDLE-shaped JSON per run, rewritten after every case."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from needle_lib.benches.judged import build_report
from needle_lib.jsonio import write_json_atomic

NDCG_K = 5


class SearchReports:
    def __init__(self, results_dir: Path, dump_path: Path | None) -> None:
        self.results_dir = results_dir
        self.dump_path = dump_path
        self.stamp = time.strftime("%Y%m%d-%H%M%S")
        self.headers: dict[str, dict[str, Any]] = {}
        self.cases: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self.paths: dict[str, Path] = {}

    def _report(self, pair: str, *, in_progress: bool) -> dict[str, Any]:
        cases = list(self.cases[pair].values())
        return build_report(self.headers[pair], cases, k=NDCG_K, in_progress=in_progress)

    def add(self, record: dict[str, Any], outcome: str) -> None:
        pair = record["pair"]
        if pair not in self.headers:
            self.headers[pair] = record["header"]
            self.cases[pair] = {}
            self.paths[pair] = self.dump_path or (
                self.results_dir / "search" / f"{pair}__{self.stamp}.json"
            )
        case = {**record["case"], "outcome": outcome}
        self.cases[pair][(case["query_id"], case["engine"])] = case
        write_json_atomic(self.paths[pair], self._report(pair, in_progress=True))

    def finish(self) -> list[dict[str, Any]]:
        reports = []
        for pair, path in self.paths.items():
            report = self._report(pair, in_progress=False)
            write_json_atomic(path, report, indent=1)
            reports.append(report)
        return reports


def engine_table(report: dict[str, Any]) -> str:
    """Terminal table: one row per engine, ``ultimate`` last."""
    header = (f"{'engine':<18} {'nDCG@' + str(report['k']):>8} {'scored':>7} {'search err':>10} "
              f"{'judge err':>9} {'skipped':>7} {'p50 s':>7} {'p95 s':>7}")
    rows = [f"{report['benchmark']}: {report['num_queries']} queries, "
            f"{report['judged_pairs']} judged pairs", header, "-" * len(header)]
    for name, engine in report["engines"].items():
        ndcg = "—" if engine["mean_ndcg"] is None else f"{engine['mean_ndcg']:.3f}"
        lat = engine.get("latency", {})
        p50 = "—" if lat.get("p50") is None else f"{lat['p50']:.2f}"
        p95 = "—" if lat.get("p95") is None else f"{lat['p95']:.2f}"
        rows.append(f"{name:<18} {ndcg:>8} {engine['num_scored']:>7} "
                    f"{engine['search_errors']:>10} {engine['judge_errors']:>9} "
                    f"{engine.get('skipped', 0):>7} {p50:>7} {p95:>7}")
    return "\n".join(rows)
