"""`needle publish REPORT… --site DIR`: add search runs to a history directory.

Every report is read and scored before the directory is touched: one malformed file
refuses the whole call and nothing is written, so a history never holds half a publish.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from needle_lib.continuous.runs import PublishedRun, load_run
from needle_lib.continuous.store import publish
from needle_lib.plugin.search_reports import engine_table


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "publish", help="add search run reports to a history directory (for dashboards)")
    parser.add_argument("reports", type=Path, nargs="+", metavar="REPORT",
                        help="results/search/<bench>__<queries>__<time>.json (or a "
                             ".partial.jsonl journal of a run in flight)")
    parser.add_argument("--site", type=Path, required=True, metavar="DIR",
                        help="history directory (created if absent)")
    parser.add_argument("--summary", type=Path, default=None, metavar="FILE",
                        help="append Markdown tables of the published runs (e.g. "
                             "$GITHUB_STEP_SUMMARY)")
    parser.set_defaults(func=run)


def markdown_summary(runs: list[PublishedRun]) -> str:
    parts = []
    for published in runs:
        state = "complete" if published.complete else "**incomplete**"
        parts.append(f"### {published.bench} · run {published.run_id} ({state})\n\n"
                     f"```\n{engine_table(published.report)}\n```\n")
    return "\n".join(parts)


def run(args: argparse.Namespace) -> int:
    runs = [load_run(path) for path in args.reports]  # all validated before any write
    result = publish(runs, args.site)
    for published in runs:
        verb = "replaced" if any(published is r for r in result.replaced) else "added"
        flag = "" if published.complete else " (incomplete)"
        print(f"{verb} {published.bench} run {published.run_id}{flag}: "
              f"{len(published.history)} engine row(s) from {published.source}")
    print(f"history → {args.site}")
    if args.summary is not None:
        with args.summary.open("a", encoding="utf-8") as fh:
            fh.write(markdown_summary(runs))
    return 0
