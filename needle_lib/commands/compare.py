"""`needle compare A B`: two runs of the same cases, B against A.

Two recall dumps get the targets whose verdict flipped and the paired statistics (B − A);
two search reports of one bench get the (query, engine) cases whose verdict flipped.
``--html`` writes the flipped cases side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needle_lib.benches.compare import SearchComparison, compare_search_runs
from needle_lib.benches.runfiles import read_run
from needle_lib.contract.schema import SchemaError, SearchRun, validate_search_run
from needle_lib.dashboard.paired import ComparisonError, PairedComparison, compare_runs
from needle_lib.dashboard.runs import Run, parse_run
from needle_lib.jsonio import write_text_atomic
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_kind
from needle_lib.metrics.flips import Flip, flip_lines
from needle_lib.recall.journal import fold_journal, read_dump
from needle_lib.recall.rescore import dump_corpus, policy_of, rescore_dump
from needle_lib.report.compare_html import flips_page
from needle_lib.report.html import diff_html, search_case_html
from needle_lib.tomlconf import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare", help="two runs of the same cases: flipped cases and paired statistics",
        description="Compare two recall dumps (flipped targets, then paired statistics on "
        "their shared targets) or two search reports of one bench (flipped query × engine "
        "cases).")
    parser.add_argument("a", type=Path, metavar="A", help="baseline run (dump or report)")
    parser.add_argument("b", type=Path, metavar="B",
                        help="candidate run (differences are B − A)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--html", type=Path, metavar="PATH",
                        help="also write the flipped cases side by side to this HTML file")
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
    lines += flip_lines(result.flips, "targets")
    lines += [
        f"per target (B vs A): {result.wins} win(s) · {result.losses} loss(es) · "
        f"{result.ties} tie(s)",
        f"matched %: A {result.a_matched_pct:.1f} → B {result.b_matched_pct:.1f}  "
        + _interval(data["matched_pct_diff"]),
        f"pass rate: A {result.a_pass_rate:.1f} → B {result.b_pass_rate:.1f}  "
        + _interval(data["pass_rate_diff"]),
    ]
    return "\n".join(lines)


def render_search(result: SearchComparison) -> str:
    return "\n".join([
        f"A: {result.a}",
        f"B: {result.b}",
        f"bench {result.bench} · {result.shared} (query, engine) case(s) decided in both"
        + (f" · left out: {result.only_a} decided in A only, {result.only_b} in B only"
           if result.only_a or result.only_b else ""),
        *flip_lines(result.flips, "cases",
                    {f.key: repr(result.cases[0][f.key]["query"]) for f in result.flips}),
    ])


def recall_sides(result: PairedComparison) -> list[tuple[Flip, str, str]]:
    """Each flipped target's line diff in A and in B, scored again from the stored answers
    under each dump's own policy (diffs are shown by a run, never dumped)."""
    rendered = []
    for run in (result.a, result.b):
        rescored, diffs = rescore_dump(run.dump, dump_corpus(run.dump), policy_of(run.dump))
        cases = {c["case_id"]: c for c in rescored["cases"]}
        rendered.append({flip.key: diff_html(cases[flip.key], diffs[flip.key])
                         for flip in result.flips})
    return [(flip, rendered[0][flip.key], rendered[1][flip.key]) for flip in result.flips]


def search_sides(result: SearchComparison) -> list[tuple[Flip, str, str]]:
    return [(flip, search_case_html(result.cases[0][flip.key]),
             search_case_html(result.cases[1][flip.key])) for flip in result.flips]


def _load(path: Path) -> Run | SearchRun:
    """A recall dump or a search run (report or journal), by what the file holds; a
    journal by the kind its header line says."""
    if path.name.endswith(JOURNAL_SUFFIX):
        if journal_kind(path) == "search":
            return read_run(path)
        return parse_run(path, fold_journal(path, in_progress=True))
    data = read_dump(path)
    if isinstance(data, dict) and "header" in data and "cases" in data:
        return validate_search_run(path, data["header"], data["cases"],
                                   version=data.get("schema_version"))
    if isinstance(data, dict) and data.get("benchmark", "recall") != "recall":
        raise SchemaError(f"{path}: neither a recall dump nor a search report")
    return parse_run(path, data)


def _compare(args: argparse.Namespace) -> PairedComparison | SearchComparison:
    a, b = _load(args.a), _load(args.b)
    if isinstance(a, Run) and isinstance(b, Run):
        return compare_runs(a, b)
    if not isinstance(a, Run) and not isinstance(b, Run):
        return compare_search_runs(args.a, a, args.b, b)
    raise ComparisonError(f"{args.a.name} and {args.b.name}: one is a recall dump, the other "
                          "a search report")


def _write_html(path: Path, result: PairedComparison | SearchComparison) -> None:
    if isinstance(result, PairedComparison):
        page = flips_page(f"needle compare · {result.a.corpus}", render(result).splitlines(),
                          (result.a.label, result.b.label), recall_sides(result))
    else:
        page = flips_page(f"needle compare · {result.bench}",
                          render_search(result).splitlines(), (result.a.name, result.b.name),
                          search_sides(result))
    write_text_atomic(path, page)


def run(args: argparse.Namespace) -> int:
    try:
        result = _compare(args)
        if args.html:
            _write_html(args.html, result)
    except (ConfigError, ComparisonError) as exc:  # SchemaError is a ConfigError
        print(f"needle compare: {exc}", file=sys.stderr)
        return 2
    for warning in result.warnings:
        print(f"needle compare: warning: {warning}", file=sys.stderr)
    if args.json:
        json.dump(result.to_json(), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(render(result) if isinstance(result, PairedComparison)
              else render_search(result))
    if args.html:
        print(f"needle compare: side by side → {args.html}", file=sys.stderr)
    return 0
