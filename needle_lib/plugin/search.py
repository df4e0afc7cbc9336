"""Search cases: gold query × engine, and the clients that serve them in one worker.

Engines and the judge are async (httpx.AsyncClient); each worker runs them on one private
event loop kept for the whole session, so connection pools survive across cases.
Cases carry an ``xdist_group`` per engine: with ``--dist loadgroup`` every engine issues one
request at a time (comparable latency samples) while different engines run in parallel.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from needle_lib.benches.queries import Query, load_queries, sample_queries
from needle_lib.judge import JUDGE_PROMPT_VERSION, JudgeError, RelevanceJudge, Verdict
from needle_lib.judge.config import judge_model_config
from needle_lib.provenance import package_info
from needle_lib.search.base import HttpSearchClient
from needle_lib.search.registry import ENGINES, make_engine
from needle_lib.search.types import SearchResult
from needle_lib.tomlconf import ConfigError

DEFAULT_ENGINES = "keenable,exa"
HOW_TO_RUN = (
    "search benchmarks need a query set: pytest evals -k news --queries FILE "
    "[--engines exa,brave] (JSONL gold rows or one query per line)"
)


@dataclass(frozen=True)
class SearchCase:
    bench: str
    query: Query
    engine: str

    @property
    def id(self) -> str:
        return f"{self.bench}-{self.query.query_id}-{self.engine}"


@dataclass
class SearchPlan:
    queries_path: Path | None
    queries: list[Query]
    engines: list[str]
    num_results: int
    snippet_chars: int
    judge_model: str
    judge_concurrency: int
    sampling: dict[str, Any]
    queries_sha256: str | None

    def cases(self, bench: str) -> list[SearchCase]:
        return [SearchCase(bench, q, e) for q in self.queries for e in self.engines]

    def pair(self, bench: str) -> str:
        stem = self.queries_path.stem if self.queries_path else "queries"
        return f"{bench}__{stem}"

    def header(self, bench: str) -> dict[str, Any]:
        assert self.queries_path is not None
        return {
            "bench": bench,
            "queries": {
                "path": str(self.queries_path),
                "sha256": self.queries_sha256,
                "count": len(self.queries),
            },
            "engines": self.engines,
            "num_results": self.num_results,
            "snippet_chars": self.snippet_chars,
            "judge": {"model": self.judge_model, "prompt_version": JUDGE_PROMPT_VERSION,
                      "concurrency": self.judge_concurrency},
            "sampling": self.sampling,
            "package": package_info(),
            "expected_cases": len(self.queries) * len(self.engines),
        }


def build_search_plan(config: pytest.Config) -> SearchPlan:
    opt = config.getoption
    engines = [e.strip() for e in (opt("engines") or DEFAULT_ENGINES).split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise ConfigError(
            f"--engines: unknown engine(s) {', '.join(unknown)}; known: {', '.join(ENGINES)}"
        )
    path = Path(opt("queries")) if opt("queries") else None
    queries: list[Query] = []
    sampling = {"sample": opt("sample"), "seed": opt("seed") or 0, "limit": opt("limit")}
    if path is not None:
        queries = sample_queries(load_queries(path), sample=opt("sample"),
                                 seed=opt("seed") or 0, limit=opt("limit"))
    return SearchPlan(
        queries_path=path,
        queries=queries,
        engines=engines,
        num_results=opt("num_results"),
        snippet_chars=opt("snippet_chars"),
        judge_model=judge_model_config(opt("judge_model")).name,
        judge_concurrency=opt("judge_concurrency"),
        sampling=sampling,
        # hashed once here, not per case: the header rides on every case record
        queries_sha256=hashlib.sha256(path.read_bytes()).hexdigest() if path else None,
    )


def judged_result(result: SearchResult, verdict: Verdict | JudgeError) -> dict[str, Any]:
    """One result as the report lists it: the engine's own evidence plus the verdict."""
    record = asdict(result)
    if isinstance(verdict, Verdict):
        record.update(rating=verdict.rating, label=verdict.label, reasoning=verdict.reasoning,
                      gates=verdict.gates)
    else:
        record.update(rating=None, label=None, reasoning=None, judge_error=str(verdict))
    return record


RELEVANT = 2  # "moderately meets" or better


def check_relevance(case: dict[str, Any], scorecard: Any) -> None:
    """The per-case verdict: did the engine put at least one relevant result in its top K?

    The headline metric (pooled nDCG) needs every engine's results and is computed in the
    run report; this per-case check is what makes a case PASSED or FAILED in pytest.
    """
    ratings = [r["rating"] for r in case["results"]]
    best = max(ratings, default=0)
    summary = (f"{case['engine']} on {case['query']!r}: ratings {ratings} "
               f"(best {best}; relevant means ≥ {RELEVANT})")
    scorecard.update_case(verdict=summary)
    if best < RELEVANT:
        pytest.fail(summary, pytrace=False)


class SearchClients:
    """Per-worker engine clients, the judge, and the event loop they live on."""

    def __init__(self, plan: SearchPlan, judge_model: str | None) -> None:
        self.plan = plan
        self._judge_model = judge_model
        self.loop = asyncio.new_event_loop()
        self._engines: dict[str, HttpSearchClient] = {}
        self._judge: RelevanceJudge | None = None

    def engine(self, name: str) -> HttpSearchClient:
        """The client for ``name``; ``MissingAPIKey`` propagates (the caller skips)."""
        if name not in self._engines:
            self._engines[name] = make_engine(name, snippet_chars=self.plan.snippet_chars)
        return self._engines[name]

    @property
    def judge(self) -> RelevanceJudge:
        if self._judge is None:
            self._judge = RelevanceJudge.create(
                self._judge_model, concurrency=self.plan.judge_concurrency
            )
        return self._judge

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        for engine in self._engines.values():
            self.run(engine.aclose())
        if self._judge is not None:
            self.run(self._judge.aclose())
        self.loop.close()
