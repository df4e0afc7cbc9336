"""Judge agreement: two judged reports of the same queries, rated by different judges (models
or prompt versions), compared pair by pair and by the engine ranking they produce
(issue 36 item 4: can a cheaper or local judge stand in for the default one?).

- **Pairs** are matched on what the judge saw: the query, the page (normalised URL) and its
  evidence (title and snippet). A page both reports rated on different evidence (an engine
  returned another snippet) is counted apart, not compared: the judges did not see the same
  thing. Pairs only one report has are counted too. Within one report a pair rated twice
  (two engines returned the same evidence) keeps its first rating.
- **Per pair**: exact agreement, agreement within one step, agreement on "relevant"
  (rating ≥ ``RELEVANT_RATING``, 3: the per-case verdict's threshold), Cohen's κ with
  quadratic and linear weights
  (``metrics.agreement`` says why both), and the 5×5 table of ratings.
- **Ranking**: each report's mean nDCG@5 per engine over the queries both hold (each
  report scored on its own pool, as Needle scores it), the two rankings compared by
  Kendall's τ-b, with a percentile-bootstrap interval from resampling queries (a query is
  drawn with all of its engines' scores, in both reports at once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from needle_lib.benches.registry import bench_named, build_report
from needle_lib.contract.records import BenchCaseRecord, SearchResultRecord
from needle_lib.contract.report import JudgedEngine, built_rows
from needle_lib.contract.schema import SearchRun
from needle_lib.errors import UsageError
from needle_lib.judge.verdict import RELEVANT_RATING
from needle_lib.metrics.agreement import confusion_matrix, kendall_tau_b, weighted_kappa
from needle_lib.metrics.bootstrap import DEFAULT_RESAMPLES, bootstrap_statistic
from needle_lib.metrics.ndcg import GAINS, ULTIMATE
from needle_lib.metrics.urls import normalize_url

RATINGS = len(GAINS)


class JudgeAgreementError(UsageError):
    """Two reports that cannot be compared; the message says which and why."""


class Side(msgspec.Struct, kw_only=True):
    """One of the two reports."""

    path: str
    judge_model: str | None
    prompt_version: str | None
    queries: int
    pairs: int


class Interval(msgspec.Struct, kw_only=True):
    estimate: float
    low: float
    high: float
    confidence: float


class EngineScores(msgspec.Struct, kw_only=True):
    """An engine's mean nDCG@5 over the shared queries under each judge, and its rank (1 =
    best; engines with equal means share a rank)."""

    engine: str
    a_mean: float
    b_mean: float
    a_rank: int
    b_rank: int


class JudgeAgreement(msgspec.Struct, kw_only=True):
    bench: str
    a: Side
    b: Side
    shared_queries: int
    only_a_queries: list[str]
    only_b_queries: list[str]
    #: pairs both reports rated on the same evidence (the ones compared)
    pairs: int
    only_a_pairs: int
    only_b_pairs: int
    #: pages both rated for a query, but never on the same evidence
    evidence_differs: int
    exact_agreement: float
    within_one: float
    relevant_agreement: float
    kappa_quadratic: float | None
    kappa_linear: float | None
    #: counts of (A's rating, B's rating): rows A 0..4, columns B 0..4
    ratings: list[list[int]]
    engines: list[EngineScores]
    kendall_tau: Interval | None
    #: engine pairs that the two judges order differently (A's better one first)
    swapped: list[list[str]]
    warnings: list[str]


@dataclass(frozen=True)
class _Report:
    path: Path
    header: dict[str, Any]  # TODO(merge): as read_run types the header
    cases: list[BenchCaseRecord]


def _evidence_key(query_id: str, result: SearchResultRecord) -> tuple[str, str, str, str]:
    return (query_id, normalize_url(result["url"]), str(result.get("title") or ""),
            str(result.get("snippet") or ""))


def _rated_pairs(report: _Report) -> dict[tuple[str, str, str, str], int]:
    pairs: dict[tuple[str, str, str, str], int] = {}
    for case in report.cases:
        for result in case["results"]:
            rating = result.get("rating")
            if isinstance(rating, int) and rating in GAINS:
                pairs.setdefault(_evidence_key(case["query_id"], result), rating)
    return pairs


def _queries(report: _Report) -> dict[str, str]:
    return {case["query_id"]: case["query"] for case in report.cases}


def _check_comparable(a: _Report, b: _Report) -> None:
    for report in (a, b):
        bench = report.header["bench"]
        kind = report.header.get("kind") or bench_named(bench).kind
        if kind != "judged":
            raise JudgeAgreementError(
                f"{report.path}: a {kind} report ({bench}) has no judge ratings; "
                "judge-agreement compares judged reports (news, agentic_rare)")
    if a.header["bench"] != b.header["bench"]:
        raise JudgeAgreementError(f"not the same bench: {a.path} is {a.header['bench']}, "
                                  f"{b.path} is {b.header['bench']}")


def _shared_queries(a: _Report, b: _Report) -> tuple[list[str], list[str], list[str]]:
    qa, qb = _queries(a), _queries(b)
    shared = [q for q in qa if q in qb]
    if not shared:
        raise JudgeAgreementError(f"{a.path} and {b.path} have no query in common: not two "
                                  "judgements of the same queries")
    for query_id in shared:
        if qa[query_id] != qb[query_id]:
            raise JudgeAgreementError(
                f"query {query_id!r} is {qa[query_id]!r} in {a.path} but {qb[query_id]!r} in "
                f"{b.path}: the reports do not come from the same query set"[:400])
    return shared, [q for q in qa if q not in qb], [q for q in qb if q not in qa]


def _per_query_ndcg(report: _Report, shared: list[str]) -> dict[str, list[float | None]]:
    """Engine → nDCG@5 of each shared query (in ``shared``'s order), this report's pool."""
    keep = set(shared)
    built = build_report(report.header, [c for c in report.cases if c["query_id"] in keep],
                         in_progress=False)
    scores: dict[str, list[float | None]] = {}
    for engine, figures in built.engines.items():
        if engine == ULTIMATE or not isinstance(figures, JudgedEngine):
            continue
        by_query = {row["query_id"]: row["ndcg"] for row in built_rows(figures)}
        scores[engine] = [by_query.get(q) for q in shared]
    return scores


def _means(scores: dict[str, list[float | None]], picks: Sequence[int]) -> dict[str, float]:
    means = {}
    for engine, values in scores.items():
        drawn = [v for v in map(values.__getitem__, picks) if v is not None]
        if drawn:
            means[engine] = sum(drawn) / len(drawn)
    return means


def _ranks(means: dict[str, float]) -> dict[str, int]:
    """1 for the best mean; equal means share a rank (competition ranking)."""
    return {engine: 1 + sum(other > mean for other in means.values())
            for engine, mean in means.items()}


def _tau(a_scores: dict[str, list[float | None]], b_scores: dict[str, list[float | None]],
         engines: list[str], picks: Sequence[int]) -> float | None:
    a_means, b_means = _means(a_scores, picks), _means(b_scores, picks)
    both = [e for e in engines if e in a_means and e in b_means]
    return kendall_tau_b([a_means[e] for e in both], [b_means[e] for e in both])


def _side(report: _Report, pairs: int) -> Side:
    judge = report.header.get("judge")
    judge = judge if isinstance(judge, dict) else {}
    model, prompt = judge.get("model"), judge.get("prompt_version")
    return Side(path=str(report.path), judge_model=model if isinstance(model, str) else None,
                prompt_version=prompt if isinstance(prompt, str) else None,
                queries=len(_queries(report)), pairs=pairs)


def compare_judges(a_path: Path, a_run: SearchRun, b_path: Path, b_run: SearchRun, *,
                   resamples: int = DEFAULT_RESAMPLES) -> JudgeAgreement:
    """The agreement of report B's judge with report A's (each a (header, cases) run)."""
    a, b = _Report(a_path, *a_run), _Report(b_path, *b_run)
    _check_comparable(a, b)
    shared, only_a, only_b = _shared_queries(a, b)
    keep = set(shared)
    rated_a = {k: r for k, r in _rated_pairs(a).items() if k[0] in keep}
    rated_b = {k: r for k, r in _rated_pairs(b).items() if k[0] in keep}
    common = [k for k in rated_a if k in rated_b]
    if not common:
        raise JudgeAgreementError(
            f"{a.path} and {b.path} share no judged result (same query, page and evidence): "
            "nothing to compare")
    pages_a = {k[:2] for k in rated_a if k not in rated_b}
    pages_b = {k[:2] for k in rated_b if k not in rated_a}
    matched_pages = {k[:2] for k in common}
    evidence_differs = len((pages_a & pages_b) - matched_pages)
    pairs = [(rated_a[k], rated_b[k]) for k in common]
    n = len(pairs)
    matrix = confusion_matrix(pairs, RATINGS)
    a_scores, b_scores = _per_query_ndcg(a, shared), _per_query_ndcg(b, shared)
    everything = range(len(shared))
    a_means, b_means = _means(a_scores, everything), _means(b_scores, everything)
    engines = [e for e in a_scores if e in a_means and e in b_means]
    a_ranks = _ranks({e: a_means[e] for e in engines})
    b_ranks = _ranks({e: b_means[e] for e in engines})
    tau = None
    if kendall_tau_b([a_means[e] for e in engines], [b_means[e] for e in engines]) is not None:
        found = bootstrap_statistic(
            lambda picks: _tau(a_scores, b_scores, engines, picks), len(shared),
            resamples=resamples)
        tau = Interval(estimate=found.estimate, low=found.low, high=found.high,
                       confidence=found.confidence)
    side_a, side_b = _side(a, len(rated_a)), _side(b, len(rated_b))
    return JudgeAgreement(
        bench=a.header["bench"], a=side_a, b=side_b, shared_queries=len(shared),
        only_a_queries=only_a, only_b_queries=only_b, pairs=n,
        only_a_pairs=len(rated_a) - n, only_b_pairs=len(rated_b) - n,
        evidence_differs=evidence_differs,
        exact_agreement=sum(x == y for x, y in pairs) / n,
        within_one=sum(abs(x - y) <= 1 for x, y in pairs) / n,
        relevant_agreement=sum(
            (x >= RELEVANT_RATING) == (y >= RELEVANT_RATING) for x, y in pairs) / n,
        kappa_quadratic=weighted_kappa(matrix, "quadratic"),
        kappa_linear=weighted_kappa(matrix, "linear"),
        ratings=matrix,
        engines=sorted((EngineScores(engine=e, a_mean=a_means[e], b_mean=b_means[e],
                                     a_rank=a_ranks[e], b_rank=b_ranks[e]) for e in engines),
                       key=lambda s: (s.a_rank, s.engine)),
        kendall_tau=tau,
        swapped=_swapped(engines, a_means, b_means),
        warnings=_warnings(side_a, side_b, only_a, only_b, engines, a_scores, b_scores),
    )


def _swapped(engines: list[str], a_means: dict[str, float],
             b_means: dict[str, float]) -> list[list[str]]:
    swapped = []
    for i, x in enumerate(engines):
        for y in engines[i + 1:]:
            if (a_means[x] - a_means[y]) * (b_means[x] - b_means[y]) < 0:
                swapped.append([x, y] if a_means[x] > a_means[y] else [y, x])
    return sorted(swapped)


def _warnings(a: Side, b: Side, only_a: list[str], only_b: list[str], engines: list[str],
              a_scores: dict[str, list[float | None]],
              b_scores: dict[str, list[float | None]]) -> list[str]:
    warnings = []
    if (a.judge_model, a.prompt_version) == (b.judge_model, b.prompt_version):
        warnings.append(f"both reports name the same judge ({a.judge_model}, prompt "
                        f"{a.prompt_version}): this measures its run-to-run consistency")
    if only_a or only_b:
        warnings.append(f"{len(only_a)} query(ies) only in A and {len(only_b)} only in B are "
                        "left out")
    unranked = sorted((set(a_scores) | set(b_scores)) - set(engines))
    if unranked:
        warnings.append("not in both rankings (missing from one report, or no scored query): "
                        + ", ".join(unranked))
    if len(engines) < 2:
        warnings.append("fewer than two engines ranked by both: no ranking to compare")
    return warnings
