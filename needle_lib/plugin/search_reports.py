"""Controller-side search reports: a journal line per case, one report per run at the end.

Pooled metrics need every engine's answers, so they are computed once when the run ends
(``needle_lib.benches.runfiles``), keeping the work per case constant however long the run.
The cases live in the journal only: the report is built by reading it back, so the
controller's memory does not grow with the run.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from needle_lib.benches.runfiles import Journal, journal_path, reserve_run_path
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord


class SearchReports:
    def __init__(self, results_dir: Path, report_path: Path | None, *, part: str = "") -> None:
        self.results_dir = results_dir
        #: ``--report``: the first bench's report path (a second bench's goes beside it).
        self.report_path = report_path
        #: ``.shard-I-of-N`` under ``--shard``: the report is one part of a run.
        self.stamp = time.strftime("%Y%m%d-%H%M%S") + part
        # The run's identity in `needle publish` (republishing a run replaces its rows): set
        # once by the controller, so every bench of one session (and every xdist worker's
        # header) shares it; UTC, unlike the file name's local-time stamp.
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self.headers: dict[str, dict[str, Any]] = {}
        self.paths: dict[str, Path] = {}
        self.journals: dict[str, Journal] = {}

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        pair = record["pair"]
        if pair not in self.headers:
            self.headers[pair] = {**record["header"], "started_at": self.started_at}
            self.paths[pair] = self._path(pair)
            self.journals[pair] = Journal(journal_path(self.paths[pair]), self.headers[pair])
        self.journals[pair].append({**record["case"], "outcome": outcome})

    def _path(self, pair: str) -> Path:
        if self.report_path is None:
            return reserve_run_path(self.results_dir / "search" / f"{pair}__{self.stamp}.json")
        if not self.paths:
            return self.report_path
        path = self.report_path
        return path.with_name(f"{path.stem}__{pair}{path.suffix}")

    def finish(self, *, interrupted: bool = False) -> list[dict[str, Any]]:
        reports = []
        for pair, path in self.paths.items():
            reports.append(self.journals[pair].finish(path, complete_run=not interrupted))
        return reports


def _cell(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def engine_table(report: dict[str, Any]) -> str:
    """Terminal table: one row per engine, ``ultimate`` last (nDCG or recall/MRR by kind)."""
    known_item = report.get("kind") == "known_item"
    k = report["k"]
    metrics = (f"{'recall@' + str(k):>9} {'MRR@' + str(k):>7}" if known_item
               else f"{'nDCG@' + str(k):>8}")
    header = (f"{'engine':<18} {metrics} {'scored':>7} {'search err':>10} "
              f"{'judge err':>9} {'skipped':>7} {'retries':>7} {'p50 s':>7} {'p95 s':>7}")
    title = f"{report['benchmark']}: {report['num_queries']} queries"
    if not known_item:
        title += f", {report['judged_pairs']} judged pairs"
    rows = [title, header, "-" * len(header)]
    for name, engine in report["engines"].items():
        figures = (f"{_cell(engine['recall_at_k']):>9} {_cell(engine['mrr_at_k']):>7}"
                   if known_item else f"{_cell(engine['mean_ndcg']):>8}")
        lat = engine.get("latency") or {}
        rows.append(f"{name:<18} {figures} {engine['num_scored']:>7} "
                    f"{engine['search_errors']:>10} {engine['judge_errors']:>9} "
                    f"{engine.get('skipped', 0):>7} {engine.get('retries', 0):>7} "
                    f"{_cell(lat.get('p50'), 2):>7} {_cell(lat.get('p95'), 2):>7}")
    return "\n".join(rows)
