"""One search run report → the rows it adds to the history.

Figures are recomputed from the report's raw cases (``read_run`` + the bench's
``build_report``), never copied from its stored aggregates: a report written by an older
version, merged by hand or cut short still yields rows scored by today's rules, and a file
that is not a run report is refused before anything is written.

A run is identified by its bench and its start (``header.started_at``, UTC, set by the
plugin's controller; older reports fall back to the ``__YYYYMMDD-HHMMSS`` stamp of their
file name), so publishing the same run again replaces its rows instead of adding twins.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from needle_lib.benches.registry import build_report, by_query
from needle_lib.benches.rows import query_hash  # one query text, one cluster across runs
from needle_lib.benches.runfiles import CaseTally, read_run
from needle_lib.contract.history import (
    HistoryRow,
    OverlapRow,
    RunRow,
    ScoresRow,
    UniquenessRow,
)
from needle_lib.contract.outcome import is_skipped
from needle_lib.contract.records import BenchCaseRecord, SearchResultRecord
from needle_lib.contract.report import (
    EngineFigures,
    JudgedEngine,
    SearchReport,
    built_rows,
    report_fields,
    summary_of,
)
from needle_lib.judge.verdict import RELEVANT_RATING
from needle_lib.kernel.journal import JOURNAL_SUFFIX
from needle_lib.metrics.ndcg import ULTIMATE
from needle_lib.metrics.overlap import family_uniqueness, pair_sharing
from needle_lib.search.families import family
from needle_lib.tomlconf import ConfigError

#: Per-query score series each kind publishes (the figures ``ci.json`` puts intervals on).
METRICS = {"judged": ("ndcg",), "known_item": ("recall", "mrr")}
#: Snippets kept in the latest-run copy: enough to read a judgement, not a 2,000-char page
#: per result (the copy lives in the history directory, which may be a git branch).
SNIPPET_KEEP = 500
_STAMP = re.compile(r"__(\d{8})-(\d{6})$")


class ReportError(ConfigError):
    """A file that cannot be published; the message names the file and what is wrong."""


@dataclass(frozen=True)
class PartsInProgress:
    """A run split over machines of which only some parts are published yet: it is shown
    as one run in progress, and adds no rows to the history until its last part lands."""

    have: int
    count: int

    def describe(self) -> str:
        return f"in progress, {self.have} of {self.count} parts"


@dataclass
class PublishedRun:
    """A run's rows for every history file, plus its trimmed report for the run browser."""

    source: Path
    bench: str
    kind: str
    run_id: str
    ts: str
    complete: bool
    #: The report as the run browser shows it (``_trimmed``), in its file's shape: the layout
    #: of ``contract.report.report_fields`` (which types it so: a known-item engine's
    #: ``by_<group>`` keys are named after its bench's groups), kept as ``RunEntry.report``.
    report: dict[str, Any]
    #: The report's figures without its rows (what ``needle publish`` prints).
    summary: SearchReport
    history: list[HistoryRow] = field(default_factory=list)
    overlap: list[OverlapRow] = field(default_factory=list)
    uniqueness: list[UniquenessRow] = field(default_factory=list)
    scores: ScoresRow | None = None
    #: Set while parts of the run are missing (``continuous.parts``).
    progress: PartsInProgress | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.bench, self.run_id

    @property
    def state(self) -> str:
        """complete / incomplete / in progress, k of N parts (for messages and summaries)."""
        if self.progress is not None:
            return self.progress.describe()
        return "complete" if self.complete else "incomplete"


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id_of(started: datetime) -> str:
    """A run's id: its start (as its header records it, UTC) to the second."""
    return started.strftime("%Y%m%dT%H%M%SZ")


@functools.lru_cache(maxsize=65536)
def parse_ts(text: str) -> datetime:
    """Cached: a history repeats each run's time on every engine and pair row."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# TODO(merge): the search run header has no declared type yet (read_run gives a dict)
def _started(path: Path, header: dict[str, Any]) -> datetime:
    value = header.get("started_at")
    if value is not None:
        try:
            return parse_ts(str(value))
        except ValueError:
            raise ReportError(f"{path}: header.started_at {value!r} is not an ISO time") \
                from None
    stem = path.name.removesuffix(JOURNAL_SUFFIX).removesuffix(".json")
    match = _STAMP.search(stem)
    if match is None:
        raise ReportError(f"{path}: cannot tell when this run started: no header.started_at "
                          "and no __YYYYMMDD-HHMMSS stamp in the file name")
    # an older report: the stamp is the runner's local time; taken as UTC (a runner's usual)
    return datetime.strptime("".join(match.groups()), "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def load_run(path: Path) -> PublishedRun:
    """Read, validate and score one report (or in-flight journal); errors name the file."""
    try:
        header, cases = read_run(path)
    except ConfigError as exc:  # unreadable, not JSON, no header and cases
        raise ReportError(str(exc)) from None
    try:
        report = build_report(header, cases, in_progress=False)
    except ConfigError as exc:
        raise ReportError(f"{path}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path}: cannot score this run ({type(exc).__name__}: {exc})") \
            from None
    started = _started(path, header)
    expected = header.get("expected_cases", len(cases))
    tally = CaseTally.of(cases)
    run = PublishedRun(
        source=path, bench=header["bench"], kind=report.kind,
        run_id=run_id_of(started), ts=iso(started),
        complete=tally.complete(expected, finished=not path.name.endswith(JOURNAL_SUFFIX)),
        report=_trimmed({**report_fields(report), "header": header,
                         "scored_cases": tally.scored}),
        summary=summary_of(report),
    )
    base = RunRow(run_id=run.run_id, ts=run.ts, bench=run.bench)
    run.history = [_history_row(base, engine, figures, complete=run.complete, k=report.k,
                                num_queries=report.num_queries)
                   for engine, figures in report.engines.items()]
    answered = _answered(cases)
    run.overlap = [OverlapRow.of(base, a, b, sharing) for (a, b), sharing in
                   pair_sharing(_rated_urls(answered, run.kind)).items()]
    run.uniqueness = [UniquenessRow.of(base, engine, family(engine), counts)
                      for engine, counts in family_uniqueness(
                          _relevant_urls(answered, run.kind), family).items()]
    qids, metrics = _scores(run.kind, report)
    run.scores = ScoresRow(run_id=run.run_id, ts=run.ts, bench=run.bench, kind=run.kind,
                           qids=qids, metrics=metrics)
    return run


def _history_row(base: RunRow, engine: str, figures: EngineFigures, *, complete: bool,
                 k: int, num_queries: int) -> HistoryRow:
    """An engine's row of ``history.jsonl`` from its report figures, checked against the
    row model as it is built (a figure of the wrong type is refused before it is written)."""
    latency = figures.latency
    common = {
        "run_id": base.run_id, "ts": base.ts, "bench": base.bench, "engine": engine,
        "complete": complete, "k": k, "num_queries": num_queries,
        "num_scored": figures.num_scored, "search_errors": figures.search_errors,
        "judge_errors": figures.judge_errors, "skipped": figures.skipped,
        "retries": figures.retries, "latency_n": latency.n if latency else 0,
        "p50_s": latency.p50 if latency else None, "p95_s": latency.p95 if latency else None,
    }
    fields: dict[str, object]
    if isinstance(figures, JudgedEngine):
        fields = {"kind": "judged", **common, "ndcg": figures.mean_ndcg}
    else:
        fields = {"kind": "known_item", **common,
                  "recall": figures.recall_at_k, "mrr": figures.mrr_at_k,
                  "judged_results": figures.judged_results,
                  "judge_upgrades": figures.judge_upgrades,
                  "misses_system_specific": figures.misses_system_specific,
                  "misses_universal": figures.misses_universal,
                  "groups": {group: {value: {"n": cell.n, "recall": cell.recall_at_k}
                                     for value, cell in cells.items()}
                             for group, cells in figures.breakdowns.items()}}
    row: HistoryRow = msgspec.convert(fields, HistoryRow)
    return row


def _answered(cases: list[BenchCaseRecord]) -> list[dict[str, BenchCaseRecord]]:
    """Per query, the cases of engines whose search succeeded (skips and failures are out:
    an engine that did not answer neither shares nor misses URLs)."""
    return list(by_query(c for c in cases
                         if c.get("search_error") is None and not is_skipped(c.get("outcome")))
                .values())


def _rated_urls(answered: list[dict[str, BenchCaseRecord]], kind: str):
    return [{engine: [(r["url"], r.get("rating") if kind == "judged" else None)
                      for r in case["results"]] for engine, case in present.items()}
            for present in answered]


def _relevant(kind: str, hit_rank: int | None, rank: int, result: SearchResultRecord) -> bool:
    """Judged: rated "highly meets" or better; known-item: the result that carried the gold
    (at the case's ``hit_rank``)."""
    if kind == "judged":
        rating = result.get("rating")
        return rating is not None and rating >= RELEVANT_RATING
    return hit_rank == rank


def _relevant_urls(answered: list[dict[str, BenchCaseRecord]], kind: str):
    return [{engine: [(r["url"], _relevant(kind, _hit_rank(case), rank, r))
                      for rank, r in enumerate(case["results"], start=1)]
             for engine, case in present.items()} for present in answered]


def _hit_rank(case: BenchCaseRecord) -> int | None:
    """A known-item case's hit rank (a judged case has none)."""
    if "hit_rank" in case:  # narrows the union (``case.get`` would read an ``object``)
        return case["hit_rank"]
    return None


def _scores(kind: str, report: SearchReport
            ) -> tuple[list[str], dict[str, dict[str, list[float | None]]]]:
    """Per-query scores aligned on one query list: ``qids`` (query-text hashes) and, per
    metric and engine, a score or None (not scored: search or judge failure, no pool)."""
    order: dict[str, str] = {}
    scored: dict[str, dict[str, dict[str, float | None]]] = {}
    for engine, figures in report.engines.items():
        for query_id, query, values in _row_scores(engine, figures):
            order.setdefault(query_id, query_hash(query))
            scored.setdefault(engine, {})[query_id] = values
    metrics: dict[str, dict[str, list[float | None]]] = {m: {} for m in METRICS[kind]}
    for engine, by_id in scored.items():
        for metric in METRICS[kind]:
            metrics[metric][engine] = [_rounded(by_id.get(qid, {}).get(metric))
                                       for qid in order]
    return list(order.values()), metrics


def _row_scores(engine: str, figures: EngineFigures
                ) -> Iterator[tuple[str, str, dict[str, float | None]]]:
    """(query id, query, metric → score) of each of an engine's per-query rows."""
    if isinstance(figures, JudgedEngine):
        for judged in built_rows(figures):
            yield judged["query_id"], judged["query"], {"ndcg": judged["ndcg"]}
        return
    for row in built_rows(figures):
        score, rank = row["score"], row["hit_rank"]
        # the pooled ultimate puts its hit at rank 1 by construction: no MRR
        mrr = None if score is None or engine == ULTIMATE else (1 / rank if rank else 0.0)
        yield row["query_id"], row["query"], {"recall": score, "mrr": mrr}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _trimmed(report: dict[str, Any]) -> dict[str, Any]:
    """The report for the latest-run browser: raw cases dropped (the per-query rows carry
    every result), snippets cut to ``SNIPPET_KEEP`` characters. In and out in the file's
    layout (``PublishedRun.report``): the copy is written as it is laid out, key order
    included."""
    engines = {}
    for engine, summary in report["engines"].items():
        rows = [{**row, "results": [_cut(r) for r in row.get("results", [])]}
                for row in summary["per_query"]]
        engines[engine] = {**summary, "per_query": rows}
    kept = {k: v for k, v in report.items() if k not in ("cases", "engines")}
    return {**kept, "engines": engines}


def _cut(result: SearchResultRecord) -> SearchResultRecord:
    snippet = result.get("snippet")
    if isinstance(snippet, str) and len(snippet) > SNIPPET_KEEP:
        cut: SearchResultRecord = {**result, "snippet": snippet[:SNIPPET_KEEP] + "…"}
        return cut
    return result
