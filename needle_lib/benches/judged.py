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

from dataclasses import asdict
from typing import Any

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
from needle_lib.metrics.overlap import pairwise_overlap, unique_urls
from needle_lib.metrics.urls import normalize_url

REPORT_SCHEMA_VERSION = 1
ALL_ENGINES_FAILED = "all engines failed"


def _scoreable(case: dict[str, Any]) -> bool:
    return case.get("search_error") is None and not case.get("judge_errors") and (
        case.get("outcome") in ("passed", "failed")
    )


def _pool_complete(present: dict[str, dict[str, Any]]) -> bool:
    """Whether every result any engine returned for the query was judged."""
    return not any(c.get("search_error") is None and c.get("judge_errors")
                   for c in present.values())


def _all_failed(present: dict[str, dict[str, Any]]) -> bool:
    """Whether every engine that was asked (not skipped) failed to search."""
    asked = [c for c in present.values() if c.get("outcome") != "skipped"]
    return bool(asked) and all(c.get("search_error") is not None for c in asked)


def _rated(case: dict[str, Any]) -> list[RatedResult]:
    return [RatedResult(r["url"], r["rating"]) for r in case["results"]]


def _penalized_ratings(results: list[RatedResult]) -> list[int]:
    seen: set[str] = set()
    ratings = []
    for result in results:
        key = normalize_url(result.url)
        ratings.append(0 if key in seen else result.rating)
        seen.add(key)
    return ratings


def build_report(header: dict[str, Any], cases: list[dict[str, Any]], *, k: int,
                 in_progress: bool) -> dict[str, Any]:
    engines: list[str] = header["engines"]
    queries: dict[str, dict[str, Any]] = {}
    by_query: dict[str, dict[str, dict[str, Any]]] = {}
    for case in cases:
        queries.setdefault(case["query_id"], {"query_id": case["query_id"],
                                              "query": case["query"]})
        by_query.setdefault(case["query_id"], {})[case["engine"]] = case
    with_ultimate = bool(engines or cases)
    per_engine: dict[str, list[dict[str, Any]]] = {name: [] for name in engines}
    ultimate_rows: list[dict[str, Any]] = []
    scores_per_query = []
    urls_per_query = []
    for query_id, info in queries.items():
        present = by_query[query_id]
        complete = _pool_complete(present)
        rankings = ({e: _rated(c) for e, c in present.items() if _scoreable(c)}
                    if complete else {})
        scores = query_ndcg(rankings, k=k) if rankings else {}
        scores_per_query.append(scores)
        urls_per_query.append({e: [r["url"] for r in c["results"]] for e, c in present.items()
                               if c.get("search_error") is None})
        ideal = ultimate_ranking(rankings, k) if rankings else []
        idcg = dcg(penalized_gains(ideal), k)
        for engine, case in present.items():
            rated = rankings.get(engine)
            per_engine.setdefault(engine, []).append({
                **info,
                "ndcg": scores.get(engine),
                "dcg": dcg(penalized_gains(rated), k) if rated is not None and idcg else None,
                "ratings": [r.get("rating") for r in case["results"]],
                "penalized_ratings": _penalized_ratings(rated) if rated is not None else None,
                "results": case["results"],
                "search_error": case.get("search_error"),
                "judge_errors": case.get("judge_errors", 0),
                "pool_incomplete": not complete,
                "latency_s": case.get("latency_s"),
            })
        if rankings or not complete or _all_failed(present):
            ultimate_rows.append({
                **info,
                "ndcg": scores.get(ULTIMATE),
                "dcg": idcg if idcg else None,
                "ratings": [r.rating for r in ideal],
                "penalized_ratings": _penalized_ratings(ideal),
                "results": [{"url": r.url, "rating": r.rating} for r in ideal],
                "search_error": ALL_ENGINES_FAILED if _all_failed(present) else None,
                "judge_errors": 0 if complete else 1,
                "pool_incomplete": not complete,
            })
    means = mean_ndcg(scores_per_query)
    report_engines = {}
    for engine, rows in per_engine.items():
        engine_cases = [by_query[q][engine] for q in by_query if engine in by_query[q]]
        latencies = [c["latency_s"] for c in engine_cases
                     if c.get("search_error") is None and c.get("latency_s") is not None]
        mean = means.get(engine)
        report_engines[engine] = {
            "mean_ndcg": mean.mean if mean else None,
            "num_scored": mean.num_scored if mean else 0,
            "search_errors": sum(c.get("search_error") is not None for c in engine_cases),
            "judge_errors": sum(c.get("judge_errors", 0) for c in engine_cases),
            "skipped": sum(c.get("outcome") == "skipped" for c in engine_cases),
            "retries": sum(c.get("retries", 0) for c in engine_cases),
            "latency": asdict(latency_stats(latencies)),
            "per_query": rows,
        }
    if with_ultimate:
        mean = means.get(ULTIMATE)
        report_engines[ULTIMATE] = {
            "mean_ndcg": mean.mean if mean else None,
            "num_scored": mean.num_scored if mean else 0,
            "search_errors": sum(r["search_error"] is not None for r in ultimate_rows),
            "judge_errors": sum(r["judge_errors"] for r in ultimate_rows),
            "skipped": 0,
            "retries": 0,
            "latency": asdict(latency_stats([])),
            "per_query": ultimate_rows,
        }
    judged = {
        (c["query"], normalize_url(r["url"]), r.get("title"), r.get("snippet"))
        for c in cases for r in c["results"] if r.get("rating") is not None
    }
    overlap = pairwise_overlap(urls_per_query)
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "benchmark": header["bench"],
        "kind": "judged",
        "in_progress": in_progress,
        **{key: value for key, value in header.items() if key not in ("bench", "engines")},
        "num_queries": len(queries),
        "num_results": header["num_results"],
        "k": k,
        "judged_pairs": len(judged),
        "judge_requests": sum(c.get("judge_requests", 0) for c in cases),
        "engines": report_engines,
        "overlap": [
            {"engines": list(pair), **asdict(value)} for pair, value in sorted(overlap.items())
        ],
        "unique_urls": unique_urls(urls_per_query),
    }
