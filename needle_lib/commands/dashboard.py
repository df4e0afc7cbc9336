"""`needle dashboard`: offline Plotly pages from recall dumps and search runs.

Recall pages come from the dumps in ``--results``; search pages from a history directory
(``--site``, written by ``needle publish``), from reports named with ``--report``, or, by
default, from the reports under ``<results>/search``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from needle_lib.commands.publish import load_runs, merged_run, run_groups
from needle_lib.continuous.runs import PublishedRun, ReportError, load_run
from needle_lib.continuous.store import Site, orphan_notes
from needle_lib.dashboard.build import build_dashboard
from needle_lib.dashboard.search_pages import SearchHistory
from needle_lib.dashboard.site_config import SiteConfig, load_site_config
from needle_lib.paths import RESULTS_DIR


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("dashboard",
                            help="build offline HTML dashboards from recall dumps and search runs")
    parser.add_argument("--results", type=Path, default=None,
                        help="directory of recall dumps (default: results/, unless --site or "
                             "--report is given)")
    parser.add_argument("--site", type=Path, default=None, metavar="DIR",
                        help="search history directory written by `needle publish`")
    parser.add_argument("--report", type=Path, action="append", default=[], metavar="REPORT",
                        help="a search run report to chart (repeatable)")
    parser.add_argument("--site-config", type=Path, default=None, metavar="FILE",
                        help="search site settings (TOML): price overrides, the archive's "
                             "dataset (see docs/site.md)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output directory (default: <site>/dashboard or "
                             "<results>/dashboard)")
    parser.set_defaults(func=run)


def _default_search(results: Path, notes: list[str]) -> SearchHistory | None:
    """The reports under ``results/search``; unreadable ones are left out with a note."""
    runs: list[PublishedRun] = []
    paths = sorted((results / "search").glob("*.json"))
    single, groups = run_groups(paths)
    for path in single:
        try:
            runs.append(load_run(path))
        except ReportError as exc:
            notes.append(f"search report left out: {exc}")
    for parts, count in groups:  # shard parts of one run: in progress until all are there
        try:
            runs.append(merged_run(parts, count, write=False))
        except ReportError as exc:
            notes.append(f"search run left out: {exc}")
    return SearchHistory(Site.of_runs(runs), f"{len(runs)} report(s) in "
                         f"{results / 'search'}") if runs else None


def run(args: argparse.Namespace) -> int:
    notes: list[str] = []
    results = args.results
    config = load_site_config(args.site_config) if args.site_config else SiteConfig()
    if args.site is not None:
        if not args.site.is_dir():
            print(f"needle dashboard: {args.site} is not a directory", file=sys.stderr)
            return 2
        history = Site.load(args.site, window_only=True)
        notes += orphan_notes(history)
        search: SearchHistory | None = SearchHistory(history, str(args.site), config)
    elif args.report:
        runs = load_runs(args.report)
        search = SearchHistory(Site.of_runs(runs), ", ".join(p.name for p in args.report),
                               config)
    else:
        results = results or RESULTS_DIR
        search = None
    if results is not None and not results.is_dir():
        print(f"needle dashboard: {results} is not a directory", file=sys.stderr)
        return 2
    if search is None and results is not None:
        search = _default_search(results, notes)
    out = args.out or (args.site / "dashboard" if args.site else (results or RESULTS_DIR)
                       / "dashboard")
    report = build_dashboard(results, out, search=search)
    for note in [*notes, *report.notes]:
        print(f"note: {note}")
    runs_count = sum(len(s.runs) for s in report.sections)
    benches = len(search.site.latest) if search else 0
    print(f"dashboard: {runs_count} recall run(s) in {len(report.sections)} cohort(s), "
          f"{benches} search bench(es), {len(report.pages)} page(s) → {report.index}")
    return 0
