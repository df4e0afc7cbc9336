"""The history directory ``needle publish`` writes and the search dashboard reads.

Plain files, so the directory can live on a git branch or in an object store and be read
by anything: ``history.jsonl`` (one row per run, bench and engine, ``ultimate`` included),
``overlap.jsonl`` (engine pairs), ``uniqueness.jsonl`` (engines), ``scores.jsonl``
(per-query scores, last seven days only), ``ci.json`` (intervals over those days),
``families.json`` and ``latest/<bench>.json`` (the newest run, for the run browser).

Writers take an exclusive ``flock`` on ``.publish.lock`` for the whole read-modify-write
and replace each file atomically, so two publishes at once both land and a reader (or a
crash) never sees half a file.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needle_lib.continuous.ci import confidence_intervals, in_window, window_end
from needle_lib.continuous.runs import PublishedRun, ReportError
from needle_lib.jsonio import read_json, write_json_atomic, write_text_atomic
from needle_lib.names import inside, safe_file_name
from needle_lib.search.families import FAMILIES

ROW_FILES = ("history", "overlap", "uniqueness", "scores")
LOCK = ".publish.lock"
LATEST = "latest"


@dataclass
class Site:
    """The history directory in memory: rows per file and the latest report per bench."""

    history: list[dict[str, Any]] = field(default_factory=list)
    overlap: list[dict[str, Any]] = field(default_factory=list)
    uniqueness: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    ci: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path) -> Site:
        """Read a history directory (missing files are empty); a malformed line is an
        error naming the file and line, so a damaged history is never silently extended."""
        site = cls()
        for name in ROW_FILES:
            setattr(site, name, _read_rows(directory / f"{name}.jsonl"))
        for path in sorted((directory / LATEST).glob("*.json")):
            try:
                latest = read_json(path)
                site.latest[latest["bench"]] = latest
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ReportError(f"{path}: not a latest-run file: {exc}") from None
        ci_path = directory / "ci.json"
        if ci_path.exists():
            try:
                site.ci = read_json(ci_path)
            except (OSError, ValueError) as exc:
                raise ReportError(f"{ci_path}: {exc}") from None
        return site

    @classmethod
    def of_runs(cls, runs: list[PublishedRun]) -> Site:
        """A history held in memory: single reports shown without publishing them."""
        site = cls()
        for run in runs:
            site.add(run)
        site.refresh()
        return site

    def add(self, run: PublishedRun) -> bool:
        """Add a run's rows, replacing those of the same run; True when it replaced."""
        replaced = False
        for name in ROW_FILES:
            rows: list[dict[str, Any]] = getattr(self, name)
            kept = [r for r in rows if (r["bench"], r["run_id"]) != run.key]
            replaced |= len(kept) != len(rows)
            new = getattr(run, name)
            kept.extend(new if isinstance(new, list) else [new])
            kept.sort(key=lambda r: (r["ts"], r["bench"]))
            setattr(self, name, kept)
        current = self.latest.get(run.bench)
        if current is None or current["ts"] <= run.ts:
            self.latest[run.bench] = {"bench": run.bench, "run_id": run.run_id, "ts": run.ts,
                                      "complete": run.complete, "source": run.source.name,
                                      "report": run.report}
        return replaced

    def refresh(self) -> None:
        """Drop per-query scores older than the window and recompute the intervals."""
        end = window_end(self.history)
        self.scores = [r for r in self.scores if end is not None and in_window(r, end)]
        self.ci = confidence_intervals(self.scores, end=end)

    def write(self, directory: Path) -> None:
        for name in ROW_FILES:
            rows = getattr(self, name)
            write_text_atomic(directory / f"{name}.jsonl", "".join(
                json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
        write_json_atomic(directory / "ci.json", self.ci, indent=1)
        write_json_atomic(directory / "families.json", FAMILIES, indent=1)
        for bench, latest in self.latest.items():
            write_json_atomic(inside(directory / LATEST, f"{safe_file_name(bench)}.json"),
                              latest)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReportError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not {"ts", "bench", "run_id"} <= row.keys():
                raise ReportError(f"{path}:{number}: a history row needs ts, bench and run_id")
            rows.append(row)
    return rows


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the directory's publish lock (blocking until other publishers are done)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Published:
    added: list[PublishedRun]
    replaced: list[PublishedRun]


def publish(runs: list[PublishedRun], directory: Path) -> Published:
    """Merge already validated runs into the history directory under its lock."""
    keys = [run.key for run in runs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ReportError("the same run given twice: " + ", ".join(
            f"{bench} run {run_id}" for bench, run_id in twice))
    with locked(directory):
        site = Site.load(directory)
        replaced = [run for run in runs if site.add(run)]
        site.refresh()
        site.write(directory)
    return Published([r for r in runs if all(r is not x for x in replaced)], replaced)
