"""`needle publish REPORT… --site DIR [--hub REPO]`: add search runs to a history directory
and, with ``--hub``, archive their artifacts in a Hugging Face dataset repository.

Every report is read and scored before the directory is touched: one malformed file
refuses the whole call and nothing is written, so a history never holds half a publish.
Reports of one run split over machines (``…shard-I-of-N.json``) are kept raw in the
history and merged there with the parts earlier publishes brought (``continuous.parts``),
so the run is published once with its pooled figures recomputed over every part, and is
"in progress" until its last part lands.

``--backfill`` rebuilds the history and the 24-hour query window from the archive alone
(a lost or damaged history branch, or a history started after the archive).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from needle_lib.continuous.archive import RUNS_ROOT, TOKEN_ENV, Archive
from needle_lib.continuous.artifacts import query_file_name, run_artifacts
from needle_lib.continuous.daily import to_jsonl
from needle_lib.continuous.parts import (
    SHARD,
    PartInfo,
    group_parts,
    group_run,
    merged_name,
    read_part,
)
from needle_lib.continuous.runs import PublishedRun, load_run
from needle_lib.continuous.store import Site, orphan_notes, publish
from needle_lib.jsonio import write_json_atomic
from needle_lib.kernel.journal import JOURNAL_SUFFIX
from needle_lib.report.search_summary import engine_table


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "publish", help="add search run reports to a history directory (for dashboards), "
                        "optionally archiving them on the Hugging Face hub")
    parser.add_argument("reports", type=Path, nargs="*", metavar="REPORT",
                        help="results/search/<bench>__<queries>__<time>.json (or a "
                             ".partial.jsonl journal of a run in flight)")
    parser.add_argument("--site", type=Path, required=True, metavar="DIR",
                        help="history directory (created if absent)")
    parser.add_argument("--summary", type=Path, default=None, metavar="FILE",
                        help="append Markdown tables of the published runs (e.g. "
                             "$GITHUB_STEP_SUMMARY)")
    parser.add_argument("--hub", default=None, metavar="REPO",
                        help="archive each run's report, journal, query file and HTML report "
                             f"in this Hugging Face dataset repository (token: ${TOKEN_ENV}; "
                             "without it the archive step is skipped)")
    parser.add_argument("--backfill", action="store_true",
                        help="rebuild the history and daily_queries.jsonl from the --hub "
                             "archive (no REPORT arguments)")
    parser.set_defaults(func=run)


def markdown_summary(runs: list[PublishedRun]) -> str:
    parts = []
    for published in runs:
        state = published.state if published.complete else f"**{published.state}**"
        parts.append(f"### {published.bench} · run {published.run_id} ({state})\n\n"
                     f"```\n{engine_table(published.summary)}\n```\n")
    return "\n".join(parts)


def split_parts(paths: list[Path]) -> tuple[list[Path], list[PartInfo], list[list[Path]]]:
    """Whole reports; shard parts whose headers record their ``shard``
    (``continuous.parts``); and, for parts written before headers recorded it, groups of
    parts by name (the same name without the ``.shard-I-of-N`` part)."""
    single: list[Path] = []
    recorded: list[PartInfo] = []
    named: dict[tuple[Path, str, str], list[Path]] = {}
    for path in paths:
        info = read_part(path)
        match = SHARD.search(path.name)
        if info is not None:
            recorded.append(info)
        elif match is not None:
            named.setdefault((path.parent, SHARD.sub("", path.name), match.group(2)),
                             []).append(path)
        else:
            single.append(path)
    return single, recorded, list(named.values())


def merged_run(parts: list[Path], count: int | None = None, *,
               write: bool = True) -> PublishedRun:
    """One run from its shard parts, merged beside them (as ``needle merge`` would write
    it; with ``write`` false, only in memory); with ``count`` (the parts the run was split
    into) recorded and parts missing, a run in progress."""
    if len(parts) == 1 and count is None:  # a lone unrecorded part: a run of fewer queries
        return load_run(parts[0])
    built = group_run(parts, count, parts[0].parent / merged_name(parts[0]))
    if write and built.merged is not None:
        write_json_atomic(built.run.source, built.merged, indent=1)
        print(f"merged {len(parts)} shard part(s) → {built.run.source}")
    return built.run


def run_groups(paths: list[Path]) -> tuple[list[Path], list[tuple[list[Path], int | None]]]:
    """Whole reports, and the parts of each run with the number of parts the run has
    (None where the headers do not record it)."""
    single, recorded, named = split_parts(paths)
    return single, ([([p.path for p in group], group[0].count)
                     for group in group_parts(recorded)] + [(group, None) for group in named])


def load_runs(paths: list[Path]) -> list[PublishedRun]:
    """Runs from reports, in memory (for pages): the shard parts of one run merged into it,
    in progress while some are missing."""
    single, groups = run_groups(paths)
    return [load_run(p) for p in single] + [merged_run(parts, count, write=False)
                                            for parts, count in groups]


def _archive(repo: str, runs: list[PublishedRun], site: Site) -> None:
    if not os.environ.get(TOKEN_ENV, "").strip():
        print(f"needle publish: {TOKEN_ENV} is not set; archive to {repo} skipped",
              file=sys.stderr)
        return
    for run in runs:
        name = query_file_name(run)
        if name is not None and run_artifacts(run).queries is None:
            print(f"needle publish: {run.source}: its query file {name!r} is not beside the "
                  "report or in its run directory (gold/); archived without it (a path "
                  "out of a report is never uploaded as it stands)", file=sys.stderr)
    uploaded = Archive(repo).upload(runs, to_jsonl(site.daily))
    print(f"archive → {repo}: {len(uploaded.added)} file(s), {len(uploaded.deleted)} stale "
          f"file(s) removed (commit {uploaded.commit[:12]})")


def _backfill(args: argparse.Namespace) -> int:
    if args.hub is None:
        print("needle publish: --backfill reads the archive: give --hub REPO", file=sys.stderr)
        return 2
    if args.reports:
        print("needle publish: --backfill takes no REPORT arguments", file=sys.stderr)
        return 2
    archive = Archive(args.hub)
    files = archive.archived_files()
    with tempfile.TemporaryDirectory(prefix="needle-backfill-") as name:
        local = archive.download(files, Path(name))
        reports = _run_reports(local)
        runs = [load_run(path) for path in reports]
        result = publish(runs, args.site, rebuild=True)
        archive.upload([], to_jsonl(result.site.daily))
    print(f"backfill: {len(runs)} run(s) from {args.hub} → {args.site}; "
          f"{len(result.site.daily)} query row(s) in the last 24 h")
    return 0


def _run_reports(local: dict[str, Path]) -> list[Path]:
    """Per archived run folder, its report (or its journal, for a run archived in flight)."""
    folders: dict[str, list[Path]] = {}
    for repo_path, path in local.items():
        parts = repo_path.split("/")
        if len(parts) == 4 and parts[0] == RUNS_ROOT:
            folders.setdefault("/".join(parts[:3]), []).append(path)
    chosen = []
    for paths in folders.values():
        reports = [p for p in paths if p.suffix == ".json"]
        journals = [p for p in paths if p.name.endswith(JOURNAL_SUFFIX)]
        chosen.extend(reports[:1] or journals[:1])
    return sorted(chosen)


def run(args: argparse.Namespace) -> int:
    if args.backfill:
        return _backfill(args)
    if not args.reports:
        print("needle publish: give REPORT files (or --backfill --hub REPO)", file=sys.stderr)
        return 2
    single, recorded, named = split_parts(args.reports)
    runs = ([load_run(p) for p in single]  # all validated before any write
            + [merged_run(group) for group in named])
    for part in recorded:
        load_run(part.path)
    result = publish(runs, args.site, parts=recorded)
    for published in result.runs:
        verb = "replaced" if any(published is r for r in result.replaced) else "added"
        flag = "" if published.complete else f" ({published.state})"
        rows = (f"{len(published.history)} engine row(s)" if published.progress is None
                else "no rows until its last part is published")
        print(f"{verb} {published.bench} run {published.run_id}{flag}: {rows} from "
              f"{published.source}")
    print(f"history → {args.site}")
    for note in orphan_notes(result.site):
        print(f"needle publish: warning: {note}", file=sys.stderr)
    if args.summary is not None:
        with args.summary.open("a", encoding="utf-8") as fh:
            fh.write(markdown_summary(result.runs))
    if args.hub is not None:
        _archive(args.hub, [r for r in result.runs if r.progress is None], result.site)
    return 0
