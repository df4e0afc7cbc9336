"""`needle compare A.json B.json`: paired comparison of two recall runs (B − A)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needle_lib.contract.schema import SchemaError
from needle_lib.dashboard.paired import ComparisonError, PairedComparison, compare_runs
from needle_lib.dashboard.runs import load_run


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare", help="paired comparison of two recall dumps on their shared targets")
    parser.add_argument("a", type=Path, metavar="A.json", help="baseline run")
    parser.add_argument("b", type=Path, metavar="B.json",
                        help="candidate run (differences are B − A)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _interval(diff: dict[str, float]) -> str:
    return (f"Δ {diff['estimate']:+.1f} pts  "
            f"[{round(100 * diff['confidence'])} % CI {diff['low']:+.1f}, {diff['high']:+.1f}]")


def render(result: PairedComparison) -> str:
    data = result.to_json()
    lines = [
        f"A: {result.a.path}  ({result.a.label})",
        f"B: {result.b.path}  ({result.b.label})",
        f"corpus {result.a.corpus} · scoring {result.a.cohort.policy} · "
        f"{data['shared_targets']} shared valid target(s)",
    ]
    for name, ids in (("only in A", result.only_a), ("only in B", result.only_b),
                      ("errored/skipped in A or B", result.excluded)):
        if ids:
            lines.append(f"  left out, {name}: {', '.join(ids)}")
    lines += [
        f"per target (B vs A): {result.wins} win(s) · {result.losses} loss(es) · "
        f"{result.ties} tie(s)",
        f"matched %: A {result.a_matched_pct:.1f} → B {result.b_matched_pct:.1f}  "
        + _interval(data["matched_pct_diff"]),
        f"pass rate: A {result.a_pass_rate:.1f} → B {result.b_pass_rate:.1f}  "
        + _interval(data["pass_rate_diff"]),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        result = compare_runs(load_run(args.a), load_run(args.b))
    except (SchemaError, ComparisonError) as exc:
        print(f"needle compare: {exc}", file=sys.stderr)
        return 2
    for warning in result.warnings:
        print(f"needle compare: warning: {warning}", file=sys.stderr)
    if args.json:
        json.dump(result.to_json(), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(render(result))
    return 0
