"""`needle dashboard`: Plotly pages from every recall dump in a results directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from needle_lib.dashboard.build import build_dashboard
from needle_lib.paths import RESULTS_DIR


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("dashboard", help="build offline HTML dashboards from recall dumps")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR,
                        help="directory of dumps (default: results/)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output directory (default: <results>/dashboard)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.results.is_dir():
        print(f"needle dashboard: {args.results} is not a directory", file=sys.stderr)
        return 2
    out = args.out or args.results / "dashboard"
    report = build_dashboard(args.results, out)
    for note in report.notes:
        print(f"note: {note}")
    runs = sum(len(s.runs) for s in report.sections)
    print(f"dashboard: {runs} run(s) in {len(report.sections)} cohort(s), "
          f"{len(report.pages)} page(s) → {report.index}")
    return 0
