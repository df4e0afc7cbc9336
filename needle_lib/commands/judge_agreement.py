"""`needle judge-agreement A B`: do two judges (models or prompt versions) agree on the same
queries, pair by pair and on the engine ranking? The method is in ``judge.agreement``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from needle_lib.benches.runfiles import read_run
from needle_lib.judge.agreement import JudgeAgreement, Side, compare_judges
from needle_lib.judge.verdict import RELEVANT_RATING


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "judge-agreement",
        help="compare two judged reports of the same queries rated by different judges: "
             "per-pair agreement, weighted kappa, and whether the engine ranking changes")
    parser.add_argument("a", type=Path, metavar="A", help="report judged by the reference judge")
    parser.add_argument("b", type=Path, metavar="B", help="report judged by the candidate judge")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _judge(side: Side) -> str:
    return f"judge {side.judge_model or '?'}, prompt {side.prompt_version or '?'}"


def _kappa(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render(result: JudgeAgreement) -> str:
    lines = [
        f"A: {result.a.path}  ({_judge(result.a)})",
        f"B: {result.b.path}  ({_judge(result.b)})",
        f"{result.bench} · {result.shared_queries} shared query(ies) · {result.pairs} judged "
        f"pair(s) in both (only in A {result.only_a_pairs}, only in B {result.only_b_pairs}; "
        f"{result.evidence_differs} page(s) judged on different evidence)",
        f"agreement: exact {100 * result.exact_agreement:.1f} % · within one "
        f"{100 * result.within_one:.1f} % · relevant (≥ {RELEVANT_RATING}) "
        f"{100 * result.relevant_agreement:.1f} %",
        f"Cohen's weighted κ: quadratic {_kappa(result.kappa_quadratic)} · linear "
        f"{_kappa(result.kappa_linear)}",
        "ratings (rows: A, columns: B)",
        "      " + "".join(f"{b:>6}" for b in range(len(result.ratings))),
        *(f"  {a:>4}" + "".join(f"{count:>6}" for count in row)
          for a, row in enumerate(result.ratings)),
        "engines by mean nDCG@5 over the shared queries (A → B, rank in brackets)",
        *(f"  {s.engine:<20} {s.a_mean:.3f} ({s.a_rank}) → {s.b_mean:.3f} ({s.b_rank})"
          for s in result.engines),
    ]
    tau = result.kendall_tau
    if tau is not None:
        lines.append(f"Kendall τ-b {tau.estimate:+.2f}  [{round(100 * tau.confidence)} % CI "
                     f"{tau.low:+.2f}, {tau.high:+.2f}, queries resampled]")
    lines.append("ranking unchanged" if not result.swapped else "order swapped: " + ", ".join(
        f"{x} > {y} under A, {y} > {x} under B" for x, y in result.swapped))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    result = compare_judges(args.a, read_run(args.a), args.b, read_run(args.b))
    for warning in result.warnings:
        print(f"needle judge-agreement: warning: {warning}", file=sys.stderr)
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(result), indent=1).decode()
                         + "\n")
    else:
        print(render(result))
    return 0
