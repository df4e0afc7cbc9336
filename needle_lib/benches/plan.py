"""Search cases: gold query × engine, and the clients that serve them in one worker.

Which rows of the query file a bench takes, how its gold is read and how its report is
built come from ``needle_lib.benches.registry``; nothing here knows a bench by name.

Engines and the judge are async (httpx.AsyncClient); each worker runs them on one private
event loop kept running for the whole session (``LoopThread``), so connection pools survive
across cases and the search dispatcher can overlap cases. Cases carry an ``xdist_group`` per
engine: with ``--dist loadgroup`` an engine's cases stay on one worker, whose lanes issue one
request at a time per engine (comparable latency samples).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needle_lib.benches.known_item import Match
from needle_lib.benches.queries import Query, file_sha256, load_queries, sample_queries
from needle_lib.benches.registry import bench_named, select_queries
from needle_lib.contract.records import SearchResultRecord
from needle_lib.contract.schema import SamplingRecord, SearchHeaderRecord
from needle_lib.judge.answer import AnswerJudge
from needle_lib.judge.config import judge_model_config
from needle_lib.judge.identity import judge_setup
from needle_lib.judge.judge import RelevanceJudge
from needle_lib.judge.verdict import JudgeError, Verdict
from needle_lib.kernel.loop_thread import LoopThread
from needle_lib.names import id_part, safe_file_name, unique_query_labels
from needle_lib.net.slots import CallSlots
from needle_lib.options import RunSettings
from needle_lib.provenance import package_info
from needle_lib.search.base import HttpSearchClient
from needle_lib.search.bounds import stored_result
from needle_lib.search.registry import (
    EngineSpec,
    known_engines,
    make_engine,
    missing_setting,
    tuned_modes,
)
from needle_lib.search.types import SearchResult
from needle_lib.tomlconf import ConfigError

DEFAULT_ENGINES = "keenable,exa"
HOW_TO_RUN = (
    "search benchmarks need a query set: pytest evals -k BENCH --queries FILE "
    "[--engines exa,brave] (news, agentic_rare: JSONL rows or one query per line; finance, "
    "scholar, legal: gold from `needle BENCH generate`)"
)


@dataclass(frozen=True)
class SearchCase:
    bench: str
    query: Query
    engine: str
    #: The query's piece of the test id (``best-hiking-boots-3f2a``): readable, and never
    #: the raw ``query_id`` of a file someone handed you (ids are rendered as HTML).
    label: str = ""

    @property
    def id(self) -> str:
        return f"{self.bench}-{self.label or id_part(self.query.query_id)}-{self.engine}"


@dataclass
class SearchPlan:
    queries_path: Path | None
    queries: list[Query]
    engines: list[str]
    #: ``--num-results``; None = each bench's own default (``Bench.default_num_results``).
    num_results: int | None
    snippet_chars: int
    judge_model: str
    judge_concurrency: int
    sampling: SamplingRecord
    queries_sha256: str | None
    #: ``--judge``: the LLM backstop of known-item benches.
    answer_judge: bool = False
    #: engine → mode, for the engines whose mode the environment tunes (checked once, here)
    engine_modes: dict[str, str] = field(default_factory=dict)
    _selected: dict[str, list[Query]] = field(default_factory=dict)

    def bench_queries(self, bench: str) -> list[Query]:
        """The bench's rows of the query file, then ``--sample``/``--limit`` (once per bench)."""
        if bench not in self._selected:
            own = select_queries(bench_named(bench), self.queries)
            self._selected[bench] = sample_queries(
                own, sample=self.sampling["sample"], seed=self.sampling["seed"],
                limit=self.sampling["limit"])
        return self._selected[bench]

    def results_for(self, bench: str) -> int:
        return self.num_results or bench_named(bench).default_num_results

    def cases(self, bench: str) -> list[SearchCase]:
        queries = self.bench_queries(bench)
        labels = unique_query_labels((q.query_id, q.query) for q in queries)
        return [SearchCase(bench, q, e, labels[q.query_id]) for q in queries
                for e in self.engines]

    def pair(self, bench: str) -> str:
        stem = self.queries_path.stem if self.queries_path else "queries"
        return f"{bench}__{safe_file_name(stem, 80)}"

    def header(self, bench: str) -> SearchHeaderRecord:
        """The run's setup for ``bench``, as its journal and report start. Built for every
        case (it rides on the case's record to the controller), so it only assembles what
        the plan worked out once."""
        assert self.queries_path is not None
        count = len(self.bench_queries(bench))
        kind = bench_named(bench).kind
        judged = kind == "judged" or self.answer_judge
        # a literal, not ``SearchHeaderRecord(...)``: calling a TypedDict costs a keyword
        # call per case, and mypy checks a literal's keys all the same
        header: SearchHeaderRecord = {
            "bench": bench,
            "kind": kind,
            "queries": {
                "path": str(self.queries_path),
                "sha256": self.queries_sha256,
                "count": count,
            },
            "engines": self.engines,
            "num_results": self.results_for(bench),
            "snippet_chars": self.snippet_chars,
            "judged": judged,
            "judge": judge_setup(self.judge_model, kind, self.judge_concurrency)
            if judged else None,
            "sampling": self.sampling,
            "package": package_info(),
            "expected_cases": count * len(self.engines),
        }
        if self.engine_modes:
            header["engine_modes"] = dict(self.engine_modes)
        return header


def _require_settings(engines: list[str], known: dict[str, EngineSpec], named: bool) -> None:
    """Engines a run asks (named, or the default list) must be evaluable: a missing key would
    otherwise skip every case of the engine and leave a green run (a CI job with a missing
    secret)."""
    missing = [(name, var) for name in engines
               if (var := missing_setting(known[name], os.environ)) is not None]
    if missing:
        which = "--engines" if named else f"--engines (default {DEFAULT_ENGINES})"
        instead = "" if named else ", or name the engines to run with --engines"
        raise ConfigError(
            f"{which}: " + "; ".join(f"{name} needs {var}" for name, var in missing)
            + f" (export it or put it in .env; --skip-missing-keys skips such engines instead"
            f"{instead})")


def require_judge(plan: SearchPlan, benches: list[str], judge_model: str | None) -> None:
    """A run with judged cases among ``benches`` needs the judge's key up front: without it
    every judged case would skip, and a run that judged nothing is no result. Raises
    ``ConfigError`` naming the variable."""
    needing = [bench for bench in benches if plan.bench_queries(bench)
               and (bench_named(bench).kind == "judged" or plan.answer_judge)]
    if not needing:
        return
    judge = judge_model_config(judge_model)
    try:
        judge.resolve_api_key()
    except ConfigError as exc:
        raise ConfigError(f"the judge of {', '.join(needing)}: {exc}") from None


def build_search_plan(settings: RunSettings) -> SearchPlan:
    engines = [e.strip() for e in (settings.engines or DEFAULT_ENGINES).split(",") if e.strip()]
    known = known_engines()
    unknown = [e for e in engines if e not in known]
    if unknown:
        raise ConfigError(
            f"--engines: unknown engine(s) {', '.join(unknown)}; known: {', '.join(known)}"
        )
    modes = tuned_modes(engines, known, os.environ)  # a bad mode: one usage error, now
    path = Path(settings.queries) if settings.queries else None
    sampling = SamplingRecord(sample=settings.sample, seed=settings.seed or 0,
                              limit=settings.limit)
    queries = load_queries(path) if path is not None else []  # a malformed row comes first
    if (settings.engines or path is not None) and not settings.skip_missing_keys:
        _require_settings(engines, known, named=bool(settings.engines))
    return SearchPlan(
        queries_path=path,
        queries=queries,
        engines=engines,
        num_results=settings.num_results,
        snippet_chars=settings.snippet_chars,
        judge_model=judge_model_config(settings.judge_model).name,
        judge_concurrency=settings.judge_concurrency,
        answer_judge=settings.judge,
        sampling=sampling,
        engine_modes=modes,
        # hashed once here, not per case: the header rides on every case record
        queries_sha256=file_sha256(path) if path else None,
    )


def judged_result(result: SearchResult, verdict: Verdict | JudgeError) -> SearchResultRecord:
    """One result as the report lists it: the engine's own evidence (bounded, cuts flagged:
    ``search.bounds``) plus the verdict."""
    record = stored_result(result)
    if isinstance(verdict, Verdict):
        record["rating"], record["label"] = verdict.rating, verdict.label
        record["reasoning"], record["gates"] = verdict.reasoning, verdict.gates
    else:
        record["rating"] = record["label"] = record["reasoning"] = None
        record["judge_error"] = str(verdict)
    record["judge_reply"] = verdict.reply
    return record


def matched_result(result: SearchResult, match: Match) -> SearchResultRecord:
    """One result as a known-item report lists it: evidence (bounded, cuts flagged), the
    matcher's verdict and why."""
    record = stored_result(result)
    record["det_match"], record["match_why"], record["judge_match"] = (
        match.matched, match.why, None)
    return record


class SearchClients:
    """Per-worker engine clients, the judges, and the event loop they live on. Both judges
    share one bound on calls in flight: ``slots`` (the run's, shared across workers)."""

    def __init__(self, plan: SearchPlan, judge_model: str | None,
                 slots: CallSlots | None = None) -> None:
        self.plan = plan
        self._judge_model = judge_model
        self.slots = slots or CallSlots(plan.judge_concurrency)
        self.loop = LoopThread()
        self._engines: dict[str, HttpSearchClient] = {}
        self._judge: RelevanceJudge | None = None
        self._answer_judge: AnswerJudge | None = None

    def engine(self, name: str) -> HttpSearchClient:
        """The client for ``name``; ``MissingAPIKey`` propagates (the caller skips)."""
        if name not in self._engines:
            self._engines[name] = make_engine(name, snippet_chars=self.plan.snippet_chars)
        return self._engines[name]

    @property
    def judge(self) -> RelevanceJudge:
        if self._judge is None:
            self._judge = RelevanceJudge.create(
                self._judge_model, concurrency=self.plan.judge_concurrency, slots=self.slots
            )
        return self._judge

    @property
    def answer_judge(self) -> AnswerJudge:
        if self._answer_judge is None:
            self._answer_judge = AnswerJudge.create(
                self._judge_model, concurrency=self.plan.judge_concurrency, slots=self.slots
            )
        return self._answer_judge

    def run(self, coroutine: Any) -> Any:
        return self.loop.run(coroutine)

    def close(self) -> None:
        self.loop.close(self._aclose())
        self.slots.close()

    async def _aclose(self) -> None:
        for engine in self._engines.values():
            await engine.aclose()
        for judge in (self._judge, self._answer_judge):
            if judge is not None:
                await judge.aclose()
