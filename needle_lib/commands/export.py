"""`needle export trec REPORT --out DIR`: a search run as TREC run files and qrels.

One subcommand per interchange format (``trec`` today), so ``needle export`` reads like
``needle <bench> generate``; what the files hold and why is in ``benches.trec``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from needle_lib.benches.runfiles import read_run
from needle_lib.benches.trec import build_export


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "export", help="write a search report in a standard interchange format (TREC)")
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    trec = formats.add_parser(
        "trec", help="one TREC run file per engine, qrels from the judge's ratings or the "
                     "gold matches, and a manifest (for trec_eval, ir_measures, ranx)")
    trec.add_argument("report", type=Path, metavar="REPORT",
                      help="a search report (results/search/*.json) or a run's .partial.jsonl")
    trec.add_argument("--out", type=Path, required=True, metavar="DIR",
                      help="a new (or empty) directory for the files")
    trec.set_defaults(func=run_trec)


def run_trec(args: argparse.Namespace) -> int:
    export = build_export(args.report, read_run(args.report))
    export.write(args.out)
    manifest = export.manifest
    runs = ", ".join(f"{engine} ({m.lines} lines)" for engine, m in manifest.engines.items())
    print(f"{args.out}: {manifest.qrels.count} qrels over {manifest.qrels.queries} queries "
          f"({manifest.bench}, {manifest.kind}); runs: {runs or 'none'}")
    if manifest.qrels.conflicting_ratings:
        print(f"  {manifest.qrels.conflicting_ratings} page(s) rated differently in different "
              "engines' lists: the qrel holds the best rating (see manifest.json)")
    return 0
