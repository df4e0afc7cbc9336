"""The schema of the search history directory's row files (``needle publish`` writes them,
the search dashboard reads them): models of the same schema library as the result files
(:mod:`needle_lib.contract.schema`), built by ``continuous.runs``, validated when a file is
read and encoded by :func:`encode_row` alone.

A row file is JSON Lines, one row per run and engine (``history.jsonl``), engine pair
(``overlap.jsonl``) or engine (``uniqueness.jsonl``), or one per run (``scores.jsonl``).
Files written before these models read with the same figures and are written back byte for
byte (keys sorted, json's default separators: ``continuous.store`` finds a row's time in
its text without parsing it); a field a file of an older Needle may lack is ``UNSET`` and
stays absent when the row is written again.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from needle_lib.metrics.overlap import PairSharing, Uniqueness


def _doc(text: str) -> Meta:
    return Meta(description=text)


class RunRow(Struct, kw_only=True):
    """What every row says: the run it belongs to. A run is its bench and its start."""

    run_id: Annotated[str, _doc("The run's start, UTC, to the second (20260701T001700Z).")]
    ts: Annotated[str, _doc("The run's start, ISO (2026-07-01T00:17:00Z).")]
    bench: Annotated[str, _doc("The bench (a plain name).")]


class _EngineRow(RunRow, tag_field="kind", kw_only=True):
    """One engine's (or the pooled ``ultimate``'s) figures for one run."""

    kind: ClassVar[str]  # the tag: which bench kind's figures the row holds

    engine: str
    complete: Annotated[bool, _doc("The run asked and answered every expected case.")]
    k: Annotated[int, _doc("Top K the run was scored at.")]
    num_queries: int
    num_scored: Annotated[int, _doc("Queries scored for this engine.")]
    search_errors: int
    judge_errors: int
    skipped: int = 0
    retries: int = 0
    latency_n: Annotated[int, _doc("Searches timed (successful ones).")] = 0
    p50_s: float | None = None
    p95_s: float | None = None


class JudgedRow(_EngineRow, tag="judged", kw_only=True):
    kind: ClassVar[str] = "judged"
    ndcg: Annotated[float | None, _doc("Mean nDCG@k over the queries scored.")]

    def metric(self, name: str) -> float | None:
        """A headline metric by its name in ``continuous.runs.METRICS``."""
        if name == "ndcg":
            return self.ndcg
        raise KeyError(f"a judged history row has no metric {name!r}")


class GroupCell(Struct, kw_only=True):
    n: int
    recall: float | None


class KnownItemRow(_EngineRow, tag="known_item", kw_only=True):
    kind: ClassVar[str] = "known_item"
    recall: Annotated[float | None, _doc("recall@k over the queries scored.")]
    mrr: Annotated[float | None, _doc("MRR@k over the queries scored.")]
    judged_results: int = 0
    judge_upgrades: int = 0
    misses_system_specific: int = 0
    misses_universal: int = 0
    groups: Annotated[dict[str, dict[str, GroupCell]],
                      _doc("Breakdowns: group → value → its queries and recall.")] = {}

    def metric(self, name: str) -> float | None:
        if name == "recall":
            return self.recall
        if name == "mrr":
            return self.mrr
        raise KeyError(f"a known-item history row has no metric {name!r}")


HistoryRow = JudgedRow | KnownItemRow


class OverlapRow(RunRow, kw_only=True):
    """One engine pair's sharing sums for one run (``metrics.overlap.PairSharing``)."""

    a: str
    b: str
    jaccard_sum: float
    num_shared3: int
    num_suspect: int
    low_shared_urls: int
    num_queries: int
    #: Absent from rows of publishes before it was counted.
    shared_urls: int | UnsetType = UNSET

    @classmethod
    def of(cls, run: RunRow, a: str, b: str, sharing: PairSharing) -> OverlapRow:
        return cls(run_id=run.run_id, ts=run.ts, bench=run.bench, a=a, b=b,
                   jaccard_sum=sharing.jaccard_sum, num_shared3=sharing.num_shared3,
                   num_suspect=sharing.num_suspect, low_shared_urls=sharing.low_shared_urls,
                   num_queries=sharing.num_queries, shared_urls=sharing.shared_urls)

    def sums(self) -> dict[str, float]:
        """The sums that add up over runs (``dashboard.search_views.SHARING_KEYS``)."""
        return {"jaccard_sum": self.jaccard_sum, "num_shared3": self.num_shared3,
                "num_suspect": self.num_suspect, "low_shared_urls": self.low_shared_urls,
                "num_queries": self.num_queries,
                "shared_urls": 0 if isinstance(self.shared_urls, UnsetType)
                else self.shared_urls}


class UniquenessRow(RunRow, kw_only=True):
    """One engine's URL counts for one run (``metrics.overlap.Uniqueness``)."""

    engine: str
    family: Annotated[str, _doc("The engine's family (engines sharing an index).")]
    unique_urls: int
    total_urls: int
    relevant_unique_urls: Annotated[int, _doc(
        "Relevant URLs no other family returned as relevant; in rows without "
        "``relevant_exclusive_urls``, that count instead (see "
        "``dashboard.search_views.uniqueness_counts``).")]
    relevant_total_urls: int
    num_queries: int
    #: Absent from rows of publishes before it was counted.
    relevant_exclusive_urls: int | UnsetType = UNSET

    @classmethod
    def of(cls, run: RunRow, engine: str, family: str, counts: Uniqueness) -> UniquenessRow:
        return cls(run_id=run.run_id, ts=run.ts, bench=run.bench, engine=engine,
                   family=family, unique_urls=counts.unique_urls,
                   total_urls=counts.total_urls,
                   relevant_unique_urls=counts.relevant_unique_urls,
                   relevant_total_urls=counts.relevant_total_urls,
                   num_queries=counts.num_queries,
                   relevant_exclusive_urls=counts.relevant_exclusive_urls)


class ScoresRow(RunRow, kw_only=True):
    """One run's per-query scores, aligned on one query list (what ``ci.json`` resamples)."""

    kind: Annotated[str, _doc("``judged`` or ``known_item``.")]
    qids: Annotated[list[str], _doc("The run's queries, as query-text hashes.")]
    metrics: Annotated[dict[str, dict[str, list[float | None]]],
                       _doc("metric → engine → a score per query (null: not scored).")]


class RunProgress(Struct, kw_only=True):
    """A run split over machines: parts published of parts expected."""

    have: int
    count: int


class RunEntry(Struct, kw_only=True, omit_defaults=True):
    """``latest/<bench>.json`` and ``runs/<bench>/<run_id>.json``: a run's trimmed report
    (``continuous.runs``) for the run browser and the run pages."""

    bench: str
    run_id: str
    ts: str
    complete: bool
    source: Annotated[str, _doc("The report's file name as published.")]
    #: The report as ``benches.registry.build_report`` makes it, cases dropped; typed with
    #: the search report (a later step of issue 33).
    report: dict[str, Any]
    progress: Annotated[RunProgress | None,
                        _doc("Set while parts of a sharded run are missing.")] = None


class Interval(Struct, kw_only=True):
    """One (bench, metric, engine) cell of ``ci.json``: the window's point and interval."""

    point: Annotated[float, _doc("Mean over the window's scored (run, query) cells.")]
    lo: Annotated[float | None, _doc("The wider of the two intervals; null with a note.")]
    hi: float | None
    by_query: Annotated[list[float] | None, _doc("[low, high], queries as clusters.")]
    by_run: Annotated[list[float] | None, _doc("[low, high], runs as clusters.")]
    n_cells: int
    n_queries: int
    n_runs: int
    note: Annotated[str | None, _doc("Why there is no interval (one run, one query).")]


class Intervals(Struct, kw_only=True):
    """``ci.json``: confidence intervals over the last seven days (``continuous.ci``)."""

    confidence: float
    resamples: int
    seed: int
    window_days: int
    window_start: str | None
    window_end: str | None
    method: str
    runs: Annotated[dict[str, list[str]], _doc("bench → the window's runs, oldest first.")]
    benches: Annotated[dict[str, dict[str, dict[str, Interval]]],
                       _doc("bench → metric → engine → its interval.")]

    def get(self, bench: str, metric: str, engine: str) -> Interval | None:
        return self.benches.get(bench, {}).get(metric, {}).get(engine)


def encode_row(row: RunRow) -> str:
    """A row as its file's line (without the newline): keys sorted, json's separators, as
    every history file has been written."""
    return json.dumps(msgspec.to_builtins(row), ensure_ascii=False, sort_keys=True)
