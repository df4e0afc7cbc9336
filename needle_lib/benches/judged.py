"""The judged (news-style) report: pooled nDCG@k per engine in the NEEDLE report shape.

Scoring happens once, at report time, over every engine's judged results for a query: the
ideal ranking is the pooled ``ultimate`` list (best rating per normalised URL across all
engines), so an engine is measured against what the engines together could have found.
A query is scored for an engine only when its search and all its judgements succeeded;
failures are counted (``search_errors``, ``judge_errors``), never scored as zero.

Two query-wide rules, because the ideal is only an ideal when the pool is whole:
- a result that could not be judged (in any engine's list) leaves the pool incomplete, so
  the query is left out for every engine (``pool_incomplete`` on its rows; ``ultimate``
  counts it as a judge error): scoring the others against a partial pool would inflate them;
- a query on which every engine's search failed has an ``ultimate`` row saying so (counted
  in its ``search_errors``), kept out of the means.
A report with no engines has no ``ultimate``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, TypedDict

from needle_lib.benches.tables import RowTables
from needle_lib.contract.outcome import is_scored, is_skipped
from needle_lib.contract.records import SearchCaseRecord, SearchResultRecord
from needle_lib.contract.report import (
    JudgedEngine,
    JudgedQueryRow,
    JudgedReport,
    Latency,
    Overlap,
    RankedRating,
)
from needle_lib.metrics.latency import latency_stats
from needle_lib.metrics.ndcg import (
    ULTIMATE,
    RatedResult,
    dcg,
    mean_ndcg,
    penalized_gains,
    query_ndcg,
    ultimate_ranking,
)
from needle_lib.metrics.overlap import OverlapTally
from needle_lib.metrics.urls import normalize_url

ALL_ENGINES_FAILED = "all engines failed"


def _scoreable(case: SearchCaseRecord) -> bool:
    return case.get("search_error") is None and not case.get("judge_errors") and (
        is_scored(case.get("outcome"))
    )


def _pool_complete(present: Mapping[str, SearchCaseRecord]) -> bool:
    """Whether every result any engine returned for the query was judged."""
    return not any(c.get("search_error") is None and c.get("judge_errors")
                   for c in present.values())


def _all_failed(present: Mapping[str, SearchCaseRecord]) -> bool:
    """Whether every engine that was asked (not skipped) failed to search."""
    asked = [c for c in present.values() if not is_skipped(c.get("outcome"))]
    return bool(asked) and all(c.get("search_error") is not None for c in asked)


def _rated(case: SearchCaseRecord) -> list[RatedResult]:
    """The case's results and ratings: a scoreable case had no judge error, so each result
    has its rating."""
    return [RatedResult(r["url"], r["rating"]) for r in case["results"]]  # type: ignore[arg-type]


def _penalized_ratings(results: list[RatedResult]) -> list[int]:
    seen: set[str] = set()
    ratings = []
    for result in results:
        key = normalize_url(result.url)
        ratings.append(0 if key in seen else result.rating)
        seen.add(key)
    return ratings


class JudgedFold:
    """The judged report built a query at a time (``add_query`` with every engine's case for
    it), so a run in flight can score each query as soon as its engines are in. The fold
    keeps only what the run-wide figures need (scores, counts, latencies, overlap sums); the rows go
    to ``tables``."""

    def __init__(self, header: dict[str, Any], *, k: int,
                 tables: RowTables[JudgedQueryRow]) -> None:
        self.header = header
        self.k = k
        self.tables = tables
        self.engines: list[str] = list(header["engines"])
        self.counts: dict[str, _EngineCounts] = {name: _EngineCounts() for name in self.engines}
        self.ultimate = _EngineCounts()
        self.any_case = False
        self.num_queries = 0
        self.judge_requests = 0
        self.scores_per_query: list[dict[str, float | None]] = []
        self.overlap = OverlapTally()
        #: digests of the distinct (query, URL, title, snippet) the judge rated
        self.judged: set[bytes] = set()

    def add_query(self, present: Mapping[str, SearchCaseRecord]) -> None:
        """One query's cases by engine (every case of the query, in run order): a judged
        report reads only the fields every search case has."""
        first = next(iter(present.values()))
        info = _QueryInfo(query_id=first["query_id"], query=first["query"])
        self.any_case = True
        self.num_queries += 1
        k = self.k
        complete = _pool_complete(present)
        rankings = ({e: _rated(c) for e, c in present.items() if _scoreable(c)}
                    if complete else {})
        scores = query_ndcg(rankings, k=k) if rankings else {}
        self.scores_per_query.append(scores)
        self.overlap.add({e: [r["url"] for r in c["results"]]
                          for e, c in present.items() if c.get("search_error") is None})
        ideal = ultimate_ranking(rankings, k) if rankings else []
        idcg = dcg(penalized_gains(ideal), k)
        for engine, case in present.items():
            rated = rankings.get(engine)
            if engine not in self.counts:
                self.engines.append(engine)
                self.counts[engine] = _EngineCounts()
            self.counts[engine].add(case)
            self.judge_requests += case.get("judge_requests", 0)
            self.judged.update(_judged_digest(case["query"], r) for r in case["results"]
                               if r.get("rating") is not None)
            self.tables.add(engine, JudgedQueryRow(
                **info,
                ndcg=scores.get(engine),
                dcg=dcg(penalized_gains(rated), k) if rated is not None and idcg else None,
                ratings=[r.get("rating") for r in case["results"]],
                penalized_ratings=_penalized_ratings(rated) if rated is not None else None,
                results=case["results"],
                search_error=case.get("search_error"),
                judge_errors=case.get("judge_errors", 0),
                pool_incomplete=not complete,
                latency_s=case.get("latency_s"),
            ))
        if rankings or not complete or _all_failed(present):
            search_error = ALL_ENGINES_FAILED if _all_failed(present) else None
            self.ultimate.search_errors += search_error is not None
            self.ultimate.judge_errors += 0 if complete else 1
            self.tables.add(ULTIMATE, JudgedQueryRow(
                **info,
                ndcg=scores.get(ULTIMATE),
                dcg=idcg if idcg else None,
                ratings=[r.rating for r in ideal],
                penalized_ratings=_penalized_ratings(ideal),
                results=[RankedRating(url=r.url, rating=r.rating) for r in ideal],
                search_error=search_error,
                judge_errors=0 if complete else 1,
                pool_incomplete=not complete,
            ))

    def report(self, *, in_progress: bool) -> JudgedReport:
        header = self.header
        means = mean_ndcg(self.scores_per_query)
        names = [*self.engines, ULTIMATE] if self.engines or self.any_case else self.engines
        report_engines = {}
        for engine in names:
            counts = self.ultimate if engine == ULTIMATE else self.counts[engine]
            mean = means.get(engine)
            report_engines[engine] = JudgedEngine(
                mean_ndcg=mean.mean if mean else None,
                num_scored=mean.num_scored if mean else 0,
                search_errors=counts.search_errors,
                judge_errors=counts.judge_errors,
                skipped=counts.skipped,
                retries=counts.retries,
                latency=Latency.of(latency_stats(counts.latencies)),
                per_query=self.tables.table(engine),
            )
        overlap = self.overlap.pairwise()
        return JudgedReport(
            benchmark=header["bench"],
            in_progress=in_progress,
            header=header,
            num_queries=self.num_queries,
            num_results=header["num_results"],
            k=self.k,
            judged_pairs=len(self.judged),
            judge_requests=self.judge_requests,
            engines=report_engines,
            overlap=[Overlap(engines=list(pair), mean_jaccard=value.mean_jaccard,
                             mean_shared=value.mean_shared, num_queries=value.num_queries)
                     for pair, value in sorted(overlap.items())],
            unique_urls=self.overlap.unique_urls(),
        )


class _QueryInfo(TypedDict):
    """A row's query, as every engine's row of it and ``ultimate``'s repeat it."""

    query_id: str
    query: str


class _EngineCounts:
    """An engine's run-wide counts and its successful searches' latencies."""

    def __init__(self) -> None:
        self.search_errors = 0
        self.judge_errors = 0
        self.skipped = 0
        self.retries = 0
        self.latencies: list[float] = []

    def add(self, case: SearchCaseRecord) -> None:
        failed = case.get("search_error") is not None
        self.search_errors += failed
        self.judge_errors += case.get("judge_errors", 0)
        self.skipped += is_skipped(case.get("outcome"))
        self.retries += case.get("retries", 0)
        latency = case.get("latency_s")
        if not failed and latency is not None:
            self.latencies.append(latency)


def _judged_digest(query: str, result: SearchResultRecord) -> bytes:
    """A judged pair's identity (query, page, what the judge saw), kept as a digest: a run's
    distinct pairs are counted without holding every snippet."""
    key = json.dumps([query, normalize_url(result["url"]), result.get("title"),
                      result.get("snippet")], ensure_ascii=False)
    return hashlib.blake2b(key.encode(), digest_size=16).digest()
