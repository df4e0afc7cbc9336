"""Controller-side search reports: a journal line per case, one report per run at the end.

Each bench's report is scored a query at a time as its engines answer
(``benches.live_report``), keeping the work per case constant however long the run and
the work at its end small. The controller keeps no case once its query is scored.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from needle_lib.benches.live_report import LiveReport
from needle_lib.benches.runfiles import reserve_run_path
from needle_lib.clock import clock_record
from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord
from needle_lib.contract.report import SearchReport
from needle_lib.contract.schema import SearchHeaderRecord, SearchShardRecord


class SearchReports:
    """One report per bench: the search benches' ``kernel.benchmark.RunWriter``."""

    def __init__(self, results_dir: Path, report_path: Path | None, *, part: str = "",
                 shard: SearchShardRecord | None = None) -> None:
        self.results_dir = results_dir
        #: ``--report``: the first bench's report path (a second bench's goes beside it).
        self.report_path = report_path
        #: ``.shard-I-of-N`` under ``--shard``: the report is one part of a run.
        self.stamp = time.strftime("%Y%m%d-%H%M%S") + part
        # The run's identity in `needle publish` (republishing a run replaces its rows): set
        # once by the controller, so every bench of one session (and every xdist worker's
        # header) shares it; UTC, unlike the file name's local-time stamp.
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        #: the moment the run is for (``NEEDLE_NOW`` or the wall clock) and the judge's
        #: "today" (``clock.clock_record``): ``started_at`` alone hid a pinned clock. Read
        #: at session start, once the run is validated (a malformed NEEDLE_NOW is a usage
        #: error there), or at the first case.
        self.clock: dict[str, str | None] | None = None
        #: ``--shard I/N``: recorded in the header, so dashboards and `needle publish` know a
        #: part of a run (its machine's start time differs from the other parts').
        self.shard = shard
        self.headers: dict[str, SearchHeaderRecord] = {}
        self.paths: dict[str, Path] = {}
        self.live: dict[str, LiveReport] = {}

    def start_clock(self) -> dict[str, str | None]:
        self.clock = self.clock or clock_record()
        return self.clock

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        if record["kind"] == "recall":
            raise TypeError(f"a {record['kind']} case filed with the search reports")
        pair = record["pair"]
        if pair not in self.headers:
            header = self.headers[pair] = record["header"].copy()  # key order as written
            header["started_at"] = self.started_at
            header["clock"] = self.start_clock()
            if self.shard:
                header["shard"] = self.shard
            self.paths[pair] = self._path(pair)
            self.live[pair] = LiveReport(self.paths[pair], self.headers[pair])
        case = record["case"].copy()  # the record's own is filed again after a teardown error
        case["outcome"] = outcome
        self.live[pair].append(case)

    def _path(self, pair: str) -> Path:
        if self.report_path is None:
            return reserve_run_path(self.results_dir / "search" / f"{pair}__{self.stamp}.json")
        if not self.paths:
            return self.report_path
        path = self.report_path
        return path.with_name(f"{path.stem}__{pair}{path.suffix}")

    def abandon(self) -> None:
        """Stop writing (a full disk): every journal is closed as it stands, for
        ``--resume``, and no report is written."""
        for live in self.live.values():
            live.abandon()

    def finish(self, *, interrupted: bool = False) -> list[SearchReport]:
        """Write every bench's report; their summaries (``contract.report.summary_of``)."""
        return [self.live[pair].finish(path, complete_run=not interrupted)
                for pair, path in self.paths.items()]

