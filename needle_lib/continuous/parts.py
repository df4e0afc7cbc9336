"""Which reports are parts of one run split by ``--shard I/N`` over machines, and how a
history directory keeps them until the run's last part lands.

Each machine starts its part at its own moment and names the file with its own stamp, so
neither the file name nor ``started_at`` ties the parts together. The header does: a part
records ``shard`` (index and count), and parts of one run share the bench and the query
file (its sha256). Parts whose starts lie within ``SAME_RUN`` of the group's first part
and whose indices differ are one run; a second part with an index already taken starts
another run (a re-run of that machine's share the next hour or day).

A CI matrix publishes each machine's part with its own ``needle publish``, so the history
keeps the raw parts (``parts/<bench>/``): each publish regroups them with the new ones and
shows a run as one run, merged exactly as ``needle merge`` merges it once every part is
there and "in progress, k of N parts" (no history rows, so neither the latest complete run
nor the standings) until then.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from needle_lib.benches.merge import merge_search, read_search_part
from needle_lib.benches.runfiles import read_run
from needle_lib.continuous.runs import (
    PartsInProgress,
    PublishedRun,
    ReportError,
    load_run,
    parse_ts,
    run_id_of,
)
from needle_lib.contract.schema import SearchHeaderRecord
from needle_lib.contract.setup import refusal, setup_differences
from needle_lib.jsonio import write_json_atomic
from needle_lib.kernel.journal import JOURNAL_SUFFIX
from needle_lib.kernel.merge import Merged, MergeError
from needle_lib.names import inside, safe_file_name
from needle_lib.tomlconf import ConfigError

#: Parts of one run start together (a CI matrix starts its jobs at once); runs of a bench
#: are an hour or more apart.
SAME_RUN = timedelta(minutes=30)
#: The history directory's folder of raw part reports.
PARTS = "parts"
#: The ``.shard-I-of-N`` a sharded run puts in its report's name.
SHARD = re.compile(r"\.shard-(\d+)-of-(\d+)(?=\.json$|\.partial\.jsonl$)")


#: (bench, query file, index, count, start): one part, whichever file holds it.
Identity = tuple[str, str, int, int, str]


@dataclass(frozen=True)
class PartInfo:
    path: Path
    bench: str
    queries: str  # the query file's sha256 (or path, for reports without one)
    index: int
    count: int
    started: str
    header: SearchHeaderRecord = field(compare=False, repr=False)

    @property
    def identity(self) -> Identity:
        """The same part whatever file it is read from: a re-publish of it replaces it."""
        return self.bench, self.queries, self.index, self.count, self.started


def part_info(path: Path, header: SearchHeaderRecord) -> PartInfo | None:
    """The part a report is, from its header; None for a whole run."""
    shard = header.get("shard")
    if not isinstance(shard, dict):
        return None
    index, count = shard.get("index"), shard.get("count")
    if not isinstance(index, int) or not isinstance(count, int) or count < 2:
        return None
    queries = header.get("queries") or {}
    return PartInfo(path, str(header.get("bench")),
                    str(queries.get("sha256") or queries.get("path") or ""), index, count,
                    str(header.get("started_at") or ""), header)


def read_part(path: Path) -> PartInfo | None:
    """``part_info`` of a report file; None also for a file that is not a report (whoever
    loads it as a run names the problem)."""
    try:
        return part_info(path, read_run(path)[0])
    except ConfigError:
        return None


def group_parts(parts: list[PartInfo]) -> list[list[PartInfo]]:
    """Parts grouped into runs (see the module's rule), each group in shard order."""
    groups: list[list[PartInfo]] = []
    for part in sorted(parts, key=lambda p: (p.started, p.index)):
        for group in groups:
            first = group[0]
            if ((first.bench, first.queries, first.count) == (part.bench, part.queries,
                                                              part.count)
                    and part.index not in {p.index for p in group}
                    and _close(first.started, part.started)):
                group.append(part)
                break
        else:
            groups.append([part])
    return [sorted(group, key=lambda p: p.index) for group in groups]


def _close(first: str, other: str) -> bool:
    try:
        return parse_ts(other) - parse_ts(first) <= SAME_RUN
    except ValueError:
        return first == other


def group_key(group: list[PartInfo]) -> tuple[str, str]:
    """(bench, run id) of the run a group of parts is: it started when its first part did
    (as ``needle merge`` dates the merged report)."""
    return group[0].bench, run_id_of(min(parse_ts(p.started) for p in group))


def merged_name(first: Path) -> str:
    """The merged report's file name: the first part's without ``.shard-I-of-N``."""
    return SHARD.sub("", first.name).removesuffix(JOURNAL_SUFFIX).removesuffix(".json") + ".json"


def merge_files(paths: list[Path]) -> Merged:
    """The search report ``needle merge`` makes of these parts."""
    try:
        return merge_search([read_search_part(path) for path in paths])
    except MergeError as exc:
        raise ReportError(str(exc)) from None


@dataclass
class GroupRun:
    """A run made of parts, and the merged report to write as ``run.source`` (None while
    the run is in progress: nothing is written for it)."""

    run: PublishedRun
    merged: dict[str, Any] | None  # as kernel.merge.Merged holds it
    parts: int


def group_run(paths: list[Path], count: int | None, target: Path) -> GroupRun:
    """The run these parts (in shard order) make, loaded from a scratch copy of their
    merge; ``count`` parts make the whole run (None: not recorded, the parts are taken as
    all there is). ``target`` is where its merged report belongs."""
    merged = merge_files(paths)
    with tempfile.TemporaryDirectory(prefix="needle-merge-") as scratch:
        scratch_path = Path(scratch) / target.name
        write_json_atomic(scratch_path, merged.dump, indent=1)
        run = load_run(scratch_path)
    run.source = target
    if count is not None and len(paths) < count:  # nothing merged to write: name a part
        run.source, run.progress = paths[-1], PartsInProgress(len(paths), count)
        run.complete = False
        return GroupRun(run, None, len(paths))
    return GroupRun(run, merged.dump, len(paths))


@dataclass
class PartsUpdate:
    """What one publish changes in a history's parts: the runs to (re)publish, the run keys
    that no longer exist (their parts now belong to a run that started earlier), and the
    files to write once every check has passed."""

    runs: list[GroupRun] = field(default_factory=list)
    stale: set[tuple[str, str]] = field(default_factory=set)
    #: Stored part file → the run key it belongs to after this publish.
    keys: dict[Path, tuple[str, str]] = field(default_factory=dict)
    copies: dict[Path, Path] = field(default_factory=dict)  # stored target → given file
    removed: list[Path] = field(default_factory=list)

    def apply(self, kept: set[tuple[str, str]]) -> None:
        """Write the merged reports of finished runs and the new parts; drop parts of runs
        the history no longer keeps (only each bench's newest runs are)."""
        for built in self.runs:
            if built.merged is not None:
                write_json_atomic(built.run.source, built.merged, indent=1)
                print(f"merged {built.parts} shard part(s) → {built.run.source}")
        for path in self.removed:
            path.unlink(missing_ok=True)
        for target, given in self.copies.items():
            if self.keys[target] in kept:
                target.parent.mkdir(parents=True, exist_ok=True)
                if given.resolve() != target.resolve():
                    shutil.copyfile(given, target)
        for target, key in self.keys.items():
            if key not in kept and target not in self.copies:
                target.unlink(missing_ok=True)


def update_parts(directory: Path, given: list[PartInfo]) -> PartsUpdate:
    """Regroup the history's stored parts with ``given`` (validated reports) and say what
    changes; a given part that joins a run of another setup is refused, naming the file.
    Nothing is written here (``PartsUpdate.apply`` does, under the publish lock)."""
    root = directory / PARTS
    stored = [info for path in sorted(root.glob("*/*")) if (info := read_part(path))]
    update = PartsUpdate()
    identities = [p.identity for p in given]
    twice = {i for i in identities if identities.count(i) > 1}
    if twice:
        raise ReportError("the same shard part given twice: " + ", ".join(
            p.path.name for p in given if p.identity in twice))
    old_key = {p.path: group_key(g) for g in group_parts(stored) for p in g}
    old_members = {frozenset(p.identity for p in g) for g in group_parts(stored)}
    replaced = {p.identity: p for p in stored if p.identity in set(identities)}
    pool = [p for p in stored if p.identity not in replaced] + given
    new_groups = group_parts(pool)
    fresh = set(identities)
    for group in new_groups:
        key = group_key(group)
        for part in group:
            _check_setup(part, group, replaced.get(part.identity), key, fresh, root)
        for part in group:
            target = _stored_path(root, part)
            update.keys[target] = key
            if part.identity in fresh:
                _check_free(target, part, stored)
                update.copies[target] = part.path
        members = frozenset(p.identity for p in group)
        if members in old_members and not members & fresh:
            continue
        for part in group:
            previous = replaced.get(part.identity, part)
            if previous.path in old_key and old_key[previous.path] != key:
                update.stale.add(old_key[previous.path])
        # the merged report goes beside the part that completed the run, on its machine
        beside = next((p.path.parent for p in reversed(group) if p.identity in fresh),
                      given[0].path.parent)
        update.runs.append(group_run([p.path for p in group], group[0].count,
                                     beside / merged_name(group[0].path)))
    for part in replaced.values():
        if part.path not in update.keys:  # a journal replaced by its part's final report
            update.removed.append(part.path)
    update.stale -= {built.run.key for built in update.runs} | set(update.keys.values())
    return update


def _stored_path(root: Path, part: PartInfo) -> Path:
    """Where the history keeps a part: under its bench, by its own file name (the merged
    report is named after the first part's, as ``needle merge`` users name it)."""
    return inside(root, f"{safe_file_name(part.bench)}/{safe_file_name(part.path.name)}")


def _check_free(target: Path, part: PartInfo, stored: list[PartInfo]) -> None:
    """A stored file of that name must be this same part (a re-publish), never another."""
    holder = next((p for p in stored if p.path == target), None)
    if holder is not None and holder.identity != part.identity:
        raise ReportError(f"{part.path}: another shard part ({holder.bench} shard "
                          f"{holder.index} of {holder.count}, started {holder.started}) is "
                          f"already published under this file name")


def _check_setup(part: PartInfo, group: list[PartInfo], before: PartInfo | None,
                 key: tuple[str, str], fresh: set[Identity], root: Path) -> None:
    """A given part must share the setup of the run it joins (and of the part it
    replaces): a part of another setup under the same run is refused, naming its file.
    (Parts given together are checked against each other by the merge.)"""
    if part.identity not in fresh:
        return
    other = before or next((p for p in group if p.identity not in fresh), None)
    if other is None:
        return
    diffs = setup_differences(other.header, part.header)
    if diffs:
        raise ReportError(refusal(
            f"{part.path}: part {part.index} of {part.count} of {part.bench} run {key[1]} "
            f"comes from a different setup than the part already published "
            f"({other.path.relative_to(root.parent)}); refusing to mix", diffs,
            (other.path.name, part.path.name)))
