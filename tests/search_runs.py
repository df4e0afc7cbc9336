"""Synthetic search runs: crafted cases turned into real reports by the benches' own
``build_report`` (through ``finish_run``, as a run's end writes them)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from needle_lib.benches.runfiles import finish_run
from needle_lib.contract.records import JudgedCaseRecord, KnownItemCaseRecord, SearchResultRecord
from needle_lib.contract.schema import MODES_BEFORE_RECORDED

LABELS = {0: "FailsM", 1: "SM", 2: "MM", 3: "HM", 4: "FullyM"}
START = datetime(2026, 7, 1, 0, 17, tzinfo=UTC)


def header(bench: str, kind: str, engines: list[str], queries: int, started: datetime,
           num_results: int = 5) -> dict[str, Any]:
    modes = {e: MODES_BEFORE_RECORDED[e] for e in engines if e in MODES_BEFORE_RECORDED}
    return {"bench": bench, "kind": kind,
            "queries": {"path": f"{bench}.jsonl", "sha256": "0" * 64, "count": queries},
            "engines": engines, "num_results": num_results, "snippet_chars": 2000,
            "judged": kind == "judged",
            "judge": {"model": "judge-model", "prompt_version": "v", "concurrency": 8},
            "sampling": {"sample": None, "seed": 0, "limit": None},
            "package": {"name": "needle-evals", "version": "0.1.0", "git_revision": "x"},
            "expected_cases": queries * len(engines),
            # as a run records them: the default mode of each env-tuned engine
            **({"engine_modes": modes} if modes else {}),
            "started_at": started.isoformat(timespec="seconds")}


def _result(url: str, **fields: Any) -> dict[str, Any]:
    return {"url": url, "title": f"title of {url}", "snippet": f"snippet of {url}",
            "published_date": None, **fields}


def judged_case(qid: str, query: str, engine: str, ratings: list[int], *,
                urls: list[str] | None = None, search_error: str | None = None,
                latency: float = 0.5) -> dict[str, Any]:
    urls = urls or [f"https://{engine}.example/{qid}/{i}" for i in range(len(ratings))]
    results = [] if search_error else [
        _result(url, rating=rating, label=LABELS[rating], reasoning=f"rated {rating}",
                gates={"freshness_gate": "pass"})
        for url, rating in zip(urls, ratings, strict=True)]
    best = max(ratings, default=0)
    outcome = "error" if search_error else ("passed" if best >= 2 else "failed")
    return {"query_id": qid, "query": query, "engine": engine, "results": results,
            "search_error": search_error, "judge_errors": 0, "judge_requests": len(results),
            "latency_s": latency, "retries": 0, "outcome": outcome}


def known_case(qid: str, query: str, engine: str, hit_rank: int | None, *,
               bucket: str = "finance", syntax: str = "plain", search_error: str | None = None,
               urls: list[str] | None = None, latency: float = 0.5) -> dict[str, Any]:
    urls = urls or [f"https://{engine}.example/{qid}/{i}" for i in range(3)]
    results = [] if search_error else [
        _result(url, det_match=hit_rank == rank,
                match_why="gold found" if hit_rank == rank else "no cue word",
                judge_match=None)
        for rank, url in enumerate(urls, start=1)]
    outcome = "error" if search_error else ("passed" if hit_rank else "failed")
    return {"query_id": qid, "query": query, "engine": engine,
            "gold": {"field": "ceo", "value": f"gold {qid}"}, "gold_text": f"ceo: gold {qid}",
            "groups": {"field": "ceo", "bucket": bucket, "syntax": syntax, "tier": "",
                       "freshness": "1y"},
            "results": results, "hit_rank": hit_rank, "det_rank": hit_rank, "judged": 0,
            "judge_errors": 0, "search_error": search_error, "latency_s": latency,
            "retries": 0, "outcome": outcome}


def _declared(record_type: type) -> set[str]:
    return set(record_type.__required_keys__ | record_type.__optional_keys__)


def undeclared_keys(case: dict[str, Any], kind: str) -> set[str]:
    """Keys of a case (and of its results) as written that its declared type
    (``contract.records``) lacks: every field a bench puts on a case is declared."""
    record_type = JudgedCaseRecord if kind == "judged" else KnownItemCaseRecord
    missing = set(case) - _declared(record_type)
    for result in case.get("results", []):
        missing |= {f"results[].{key}" for key in set(result) - _declared(SearchResultRecord)}
    return missing


def write_report(directory: Path, head: dict[str, Any], cases: list[dict[str, Any]],
                 started: datetime) -> Path:
    path = directory / f"{head['bench']}__{head['bench']}__{started:%Y%m%d-%H%M%S}.json"
    finish_run(path, head, cases)
    return path


def news_run(directory: Path, started: datetime, *, seed: int,
             engines: tuple[str, ...] = ("exa", "exa-instant", "brave"),
             queries: int = 6, quality: dict[str, float] | None = None,
             failing: str | None = None) -> Path:
    """A judged news run: fresh queries each hour; each engine's chance of a good result is
    its ``quality``; ``failing`` makes one engine's searches fail on the first query."""
    rng = random.Random(seed)
    quality = quality or {"exa": 0.8, "exa-instant": 0.7, "brave": 0.4}
    cases = []
    for q in range(queries):
        qid, text = f"n{seed}-{q}", f"news story {seed} number {q}"
        shared = f"https://news.example/{seed}/{q}"
        for engine in engines:
            if engine == failing and q == 0:
                cases.append(judged_case(qid, text, engine, [], search_error="HTTP 503"))
                continue
            ratings = [4 if rng.random() < quality.get(engine, 0.5) else rng.choice([0, 1, 2])
                       for _ in range(3)]
            urls = [shared] + [f"https://{engine}.example/{qid}/{i}" for i in range(1, 3)]
            cases.append(judged_case(qid, text, engine, ratings, urls=urls,
                                     latency=0.2 + rng.random()))
    return write_report(directory, header("news", "judged", list(engines), queries, started),
                        cases, started)


def finance_run(directory: Path, started: datetime, *, seed: int,
                engines: tuple[str, ...] = ("exa", "keenable"), queries: int = 6,
                hit_rate: dict[str, float] | None = None) -> Path:
    """A known-item finance run over a fixed query set (the same questions every day)."""
    rng = random.Random(seed)
    hit_rate = hit_rate or {"exa": 0.7, "keenable": 0.5}
    cases = []
    for q in range(queries):
        qid, text = f"f{q}", f"company {q} ceo"
        bucket = "finance" if q % 2 == 0 else "filings"
        for engine in engines:
            rank = rng.choice([1, 2, 3]) if rng.random() < hit_rate.get(engine, 0.5) else None
            cases.append(known_case(qid, text, engine, rank, bucket=bucket,
                                    latency=0.3 + rng.random()))
    return write_report(directory, header("finance", "known_item", list(engines), queries,
                                          started), cases, started)


def history_runs(directory: Path, *, days: int = 4, news_per_day: int = 3) -> list[Path]:
    """Several days of runs: news a few times a day, finance daily."""
    paths = []
    for day in range(days):
        for slot in range(news_per_day):
            started = START + timedelta(days=day, hours=slot)
            paths.append(news_run(directory, started, seed=day * 10 + slot,
                                  failing="brave" if (day, slot) == (1, 0) else None))
        paths.append(finance_run(directory, START + timedelta(days=day), seed=day))
    return paths



def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` and its bytes (to show a call wrote nothing)."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}
