"""The history directory ``needle publish`` writes and the search dashboard reads.

Plain files, so the directory can live on a git branch or in an object store and be read
by anything: ``history.jsonl`` (one row per run, bench and engine, ``ultimate`` included),
``overlap.jsonl`` (engine pairs), ``uniqueness.jsonl`` (engines), ``scores.jsonl``
(per-query scores, last seven days only), ``ci.json`` (intervals over those days),
``families.json``, ``latest/<bench>.json`` (the bench's latest run, for the run browser:
the newest complete run of all its queries, as ``kernel.latest.takes_view`` decides for
recall's latest view too, so a later ``--sample``, ``-k`` or interrupted run never hides
it), ``runs/<bench>/<run_id>.json`` (the trimmed reports of each bench's newest
``RUNS_KEPT`` runs and of its latest one, for the judgement browser and run permalinks;
older runs live in the archive; a run still waiting for shard parts is kept here only,
marked ``progress``), ``parts/<bench>/``
(those runs' raw shard parts, ``continuous.parts``) and ``daily_queries.jsonl`` (the
queries of the last 24 hours, ``continuous.daily``).

Writers take an exclusive ``flock`` on ``.publish.lock`` for the whole read-modify-write
and replace each file atomically, so two publishes at once both land and a reader (or a
crash) never sees half a file. A publish writes in an order a crash can interrupt at any
point: the runs' kept reports first, then the row files that refer to them, then
``latest/``, and only last removes reports no longer kept. An interrupted publish leaves at
most reports without rows (harmless: the next publish of the run replaces them), never rows
whose run page would have no report. Rows of a run that *should* have its report here and
do not (a history written before this order) are found by ``Site.orphans`` and reported by
``needle publish`` and ``needle dashboard``.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import msgspec

from needle_lib.continuous.artifacts import run_artifacts
from needle_lib.continuous.ci import WINDOW, confidence_intervals, in_window, window_end
from needle_lib.continuous.daily import (
    DAILY_FILE,
    daily_rows,
    read_query_records,
    rolling_window,
    to_jsonl,
)
from needle_lib.continuous.parts import PartInfo, update_parts
from needle_lib.continuous.runs import PublishedRun, ReportError, parse_ts
from needle_lib.contract.history import (
    HistoryRow,
    Intervals,
    OverlapRow,
    RunEntry,
    RunProgress,
    RunRow,
    ScoresRow,
    UniquenessRow,
    encode_row,
)
from needle_lib.jsonio import JSONObject, write_json_atomic, write_text_atomic
from needle_lib.kernel.latest import Standing, takes_view
from needle_lib.names import inside, safe_file_name
from needle_lib.search.families import FAMILIES

ROW_FILES = ("history", "overlap", "uniqueness", "scores")
#: Row files whose pages show the seven-day window only (``scores`` keeps only it anyway).
WINDOWED = ("overlap", "uniqueness")
LOCK = ".publish.lock"
LATEST = "latest"
RUNS = "runs"
#: Run reports kept per bench: a week of the daily benches, a day of hourly news; enough to
#: browse recent judgements without the history branch growing by a report every hour.
RUNS_KEPT = 30
#: Said of a run with rows but no kept report (``Site.orphans``), wherever it is reported.
MISSING_REPORT = ("its report is missing from the history although it is among its bench's "
                  "newest runs (a publish was interrupted after writing its rows); publish "
                  "the run's report again (needle publish REPORT --site DIR) to restore it")


def orphan_notes(site: Site) -> list[str]:
    """One line per run with rows but no kept report (``Site.orphans``)."""
    return [f"{bench} run {run_id}: {MISSING_REPORT}" for bench, run_id in site.orphans()]


@dataclass
class Site:
    """The history directory in memory: rows per file and the latest run per bench."""

    history: list[HistoryRow] = field(default_factory=list)
    overlap: list[OverlapRow] = field(default_factory=list)
    uniqueness: list[UniquenessRow] = field(default_factory=list)
    scores: list[ScoresRow] = field(default_factory=list)
    latest: dict[str, RunEntry] = field(default_factory=dict)
    #: None until intervals are computed (``refresh``) or read (a history with ``ci.json``).
    ci: Intervals | None = None
    #: Kept run reports by (bench, run_id), each like a ``latest`` entry.
    reports: dict[tuple[str, str], RunEntry] = field(default_factory=dict)
    #: ``daily_queries.jsonl``: query records (``continuous.daily``) with their run's keys.
    daily: list[JSONObject] = field(default_factory=list)
    #: Kept reports to write again though their file exists (re-published runs).
    rewrite: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def load(cls, directory: Path, *, window_only: bool = False) -> Site:
        """Read a history directory (missing files are empty); a malformed line is an
        error naming the file and line, so a damaged history is never silently extended.

        ``window_only`` (for pages, never for a publish): of the per-pair and per-engine
        files (``WINDOWED``), only rows of the last seven days are read; every page shows
        those for the window alone, and a year of them is most of the directory."""
        site = cls()
        history: Callable[[str], HistoryRow] = msgspec.json.Decoder(HistoryRow).decode
        site.history = _read_rows(directory / "history.jsonl", history)
        end = window_end(site.history) if window_only else None
        since = end - WINDOW if end else None
        site.overlap = _read_rows(directory / "overlap.jsonl", _rows_of(OverlapRow),
                                  since=since)
        site.uniqueness = _read_rows(directory / "uniqueness.jsonl", _rows_of(UniquenessRow),
                                     since=since)
        site.scores = _read_rows(directory / "scores.jsonl", _rows_of(ScoresRow))
        site.daily = _read_rows(directory / DAILY_FILE, _query_row, what="a query row")
        for path in sorted((directory / LATEST).glob("*.json")):
            latest = _read_entry(path)
            site.latest[latest.bench] = latest
        for path in sorted((directory / RUNS).glob("*/*.json")):
            entry = _read_entry(path)
            site.reports[entry.bench, entry.run_id] = entry
        ci_path = directory / "ci.json"
        if ci_path.exists():
            try:
                site.ci = msgspec.json.decode(ci_path.read_bytes(), type=Intervals)
            except (OSError, msgspec.DecodeError) as exc:
                raise ReportError(f"{ci_path}: {exc}") from None
        return site

    @classmethod
    def of_runs(cls, runs: list[PublishedRun]) -> Site:
        """A history held in memory: single reports shown without publishing them."""
        site = cls()
        site.add(runs)
        site.refresh()
        return site

    def add(self, runs: list[PublishedRun]) -> list[PublishedRun]:
        """Add runs' rows, replacing those of the same runs; returns the runs that replaced
        earlier rows. One pass per file however many runs (a backfill adds a year). A run
        in progress (parts missing) adds no rows: it is kept as a report entry only, so it
        is neither a bench's latest run nor part of any figure until its last part lands.
        Each bench's latest run is chosen again (``_choose_latest``)."""
        keys = {run.key for run in runs}
        present = {key for key in keys if key in self.reports}
        finished = [run for run in runs if run.progress is None]
        for name in ROW_FILES:
            rows: list[RunRow] = getattr(self, name)
            kept = []
            for row in rows:
                key = (row.bench, row.run_id)
                if key in keys:
                    present.add(key)
                else:
                    kept.append(row)
            for run in finished:
                new = getattr(run, name)
                kept.extend(new if isinstance(new, list) else [new] if new else [])
            kept.sort(key=lambda r: (r.ts, r.bench))
            setattr(self, name, kept)
        for run in runs:
            entry = RunEntry(bench=run.bench, run_id=run.run_id, ts=run.ts,
                             complete=run.complete, source=run.source.name, report=run.report)
            if run.progress is not None:
                entry.progress = RunProgress(have=run.progress.have, count=run.progress.count)
            self.reports[run.key] = entry
        for bench in {run.bench for run in runs}:
            self._choose_latest(bench, keys)
        return [run for run in runs if run.key in present]

    def _choose_latest(self, bench: str, republished: set[tuple[str, str]]) -> None:
        """The bench's latest run (``kernel.latest.takes_view``) of its kept reports and the
        run that held the view, unless that run was just published again: its new report
        stands for it (and may no longer be the best)."""
        holder = self.latest.pop(bench, None)
        pool = [] if holder is None or (bench, holder.run_id) in republished else [holder]
        pool += [entry for (b, _), entry in self.reports.items() if b == bench]
        for entry in pool:
            current = self.latest.get(bench)
            if takes_view(standing(entry), standing(current) if current else None):
                self.latest[bench] = entry

    def drop(self, keys: set[tuple[str, str]]) -> None:
        """Forget runs in progress that no longer exist (their parts now belong to a run
        that started earlier); such a run has a report entry only, never rows."""
        self.reports = {k: v for k, v in self.reports.items() if k not in keys}

    def in_progress(self, bench: str) -> list[RunEntry]:
        """The bench's runs in progress newer than its latest run, newest first."""
        latest = self.latest.get(bench)
        return sorted((entry for (b, _), entry in self.reports.items()
                       if b == bench and entry.progress is not None
                       and (latest is None or entry.ts > latest.ts)),
                      key=lambda e: e.ts, reverse=True)

    def add_daily(self, runs: list[PublishedRun], rows: list[JSONObject]) -> None:
        """Replace these runs' rows in the 24-hour query window with ``rows``."""
        self.daily = rolling_window(self.daily, runs, rows)

    def refresh(self) -> None:
        """Drop per-query scores older than the window and run reports beyond the newest
        ``RUNS_KEPT`` per bench (its latest run's excepted: the run browser shows it), and
        recompute the intervals."""
        end = window_end(self.history)
        self.scores = [r for r in self.scores if end is not None and in_window(r, end)]
        self.ci = confidence_intervals(self.scores, end=end)
        newest: dict[str, list[tuple[str, str]]] = {}
        for key in sorted(self.reports, key=lambda k: self.reports[k].ts, reverse=True):
            newest.setdefault(key[0], []).append(key)
        keep = {key for keys in newest.values() for key in keys[:RUNS_KEPT]}
        keep |= {(bench, entry.run_id) for bench, entry in self.latest.items()}
        self.reports = {k: v for k, v in self.reports.items() if k in keep}

    def write(self, directory: Path) -> None:
        """Write the directory in crash-safe order (see the module docstring): the reports
        rows refer to, then the rows, then ``latest/``, then drop reports no longer kept."""
        for (bench, run_id), entry in self.reports.items():
            target = inside(directory / RUNS,
                            f"{safe_file_name(bench)}/{safe_file_name(run_id)}.json")
            # a run's kept report never changes unless re-published
            if (bench, run_id) in self.rewrite or not target.exists():
                write_json_atomic(target, msgspec.to_builtins(entry))
        self.rewrite = set()
        for name in ROW_FILES:
            rows = getattr(self, name)
            write_text_atomic(directory / f"{name}.jsonl",
                              "".join(encode_row(r) + "\n" for r in rows))
        if self.ci is not None:
            write_json_atomic(directory / "ci.json", msgspec.to_builtins(self.ci), indent=1)
        write_json_atomic(directory / "families.json", FAMILIES, indent=1)
        write_text_atomic(directory / DAILY_FILE, to_jsonl(self.daily))
        for bench, latest in self.latest.items():
            write_json_atomic(inside(directory / LATEST, f"{safe_file_name(bench)}.json"),
                              msgspec.to_builtins(latest))
        for path in (directory / RUNS).glob("*/*.json"):
            if (path.parent.name, path.stem) not in self.reports:
                path.unlink()

    def forget_reports(self, keys: list[tuple[str, str]]) -> None:
        """Mark re-published runs so their kept reports are rewritten (in place, by
        ``write``: unlinking them first left their rows without a report until then)."""
        self.rewrite |= set(keys)

    def orphans(self) -> list[tuple[str, str]]:
        """Finished runs with rows in the history but no kept report although they are
        among their bench's newest ``RUNS_KEPT`` runs: a publish interrupted between its rows
        and its report (before publishes wrote reports first). Their run pages would have
        nothing to show; ``needle publish`` of the run's report repairs them."""
        times: dict[tuple[str, str], str] = {}
        for row in self.history:
            key = (row.bench, row.run_id)
            times[key] = min(times.get(key, row.ts), row.ts)
        for key, entry in self.reports.items():
            times.setdefault(key, entry.ts)
        newest: dict[str, list[tuple[str, str]]] = {}
        for key in sorted(times, key=lambda k: times[k], reverse=True):
            newest.setdefault(key[0], []).append(key)
        return sorted(key for keys in newest.values() for key in keys[:RUNS_KEPT]
                      if key not in self.reports)


def standing(entry: RunEntry) -> Standing:
    """How a published run stands for its bench (``kernel.latest``). Its full selection is
    what its header's ``sampling`` records: no ``--sample`` or ``--limit`` (a ``-k`` subset or
    a skipped engine leaves the run incomplete instead); a report without one (an older
    Needle's) counts as full."""
    header = entry.report.get("header") or {}
    sampling = header.get("sampling") or {}
    return Standing(whole=entry.progress is None,
                    full_selection=sampling.get("sample") is None
                    and sampling.get("limit") is None,
                    complete=entry.complete, started=entry.ts)


def _read_entry(path: Path) -> RunEntry:
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunEntry)
    except (OSError, msgspec.DecodeError) as exc:
        raise ReportError(f"{path}: not a run-report file: {exc}") from None


#: A row's time as ``Site.write`` puts it (sorted keys, default separators): a key after
#: ", " or at the start of the object (inside a JSON string every quote is escaped).
_TS_KEY, _TS_FIRST = ', "ts": "', '{"ts": "'


def _row_ts(line: str) -> str | None:
    start = line.find(_TS_KEY)
    if start >= 0:
        start += len(_TS_KEY)
    elif line.startswith(_TS_FIRST):
        start = len(_TS_FIRST)
    else:
        return None
    end = line.find('"', start)
    return line[start:end] if end > start else None


Row = TypeVar("Row")


def _read_rows(path: Path, decode: Callable[[str], Row], *, what: str = "a history row",
               since: datetime | None = None) -> list[Row]:
    """Every row of ``path``, each decoded and validated by ``decode``; with ``since``, older
    rows are recognised by their time alone and not parsed, up to the first newer one
    (``Site.write`` sorts rows by time; readers still filter by window, so rows out of
    order cost time, never a wrong figure)."""
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if since is not None and (stamp := _row_ts(line)) is not None:
                try:
                    if parse_ts(stamp) <= since:
                        continue
                    since = None  # the window starts here
                except ValueError:
                    pass  # parsed below, which names the line if it is malformed
            try:
                rows.append(decode(line))
            except msgspec.ValidationError as exc:
                raise ReportError(f"{path}:{number}: not {what}: {exc}") from None
            except msgspec.DecodeError as exc:
                raise ReportError(f"{path}:{number}: not JSON ({exc})") from None
    return rows


def _rows_of(model: type[Row]) -> Callable[[str], Row]:
    return msgspec.json.Decoder(model).decode


def _query_row(line: str) -> JSONObject:
    """A ``daily_queries.jsonl`` row: a query record of any shape, with its run."""
    row: JSONObject = msgspec.json.decode(line)
    msgspec.convert(row, RunRow)  # an object with its run's keys; the rest is the record's
    return row


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
    site: Site

    @property
    def runs(self) -> list[PublishedRun]:
        return [*self.added, *self.replaced]


def publish(runs: list[PublishedRun], directory: Path, *, parts: Sequence[PartInfo] = (),
            rebuild: bool = False) -> Published:
    """Merge already validated runs into the history directory under its lock; ``parts``
    (validated shard parts) join the parts the history keeps (``continuous.parts``) and
    publish the runs they make; ``rebuild`` replaces the directory's history with these
    runs alone (a backfill from the archive)."""
    with locked(directory):
        update = update_parts(directory, list(parts)) if parts else None
        runs = runs + [built.run for built in update.runs] if update else runs
        keys = [run.key for run in runs]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        if twice:
            raise ReportError("the same run given twice: " + ", ".join(
                f"{bench} run {run_id}" for bench, run_id in twice))
        daily = [row for run in runs if run.progress is None
                 for row in daily_rows(run, _query_records(run))]
        site = Site() if rebuild else Site.load(directory)
        _refuse_unfinishing(runs, site)
        replaced = site.add(runs)
        site.drop(update.stale if update else set())
        site.add_daily([run for run in runs if run.progress is None], daily)
        site.refresh()
        site.forget_reports([run.key for run in runs])
        if update:
            update.apply(set(site.reports))
        site.write(directory)
    return Published([r for r in runs if all(r is not x for x in replaced)], replaced, site)


def _refuse_unfinishing(runs: list[PublishedRun], site: Site) -> None:
    """A part re-published after its finished run's parts were dropped (only the newest
    runs' are kept) would make that run "in progress" again and take its rows away."""
    finished = {(row.bench, row.run_id) for row in site.history}
    for run in runs:
        if run.progress is not None and run.key in finished:
            raise ReportError(f"{run.source}: {run.bench} run {run.run_id} is published as a "
                              "finished run and its other parts are no longer kept in the "
                              "history; publish all its parts in one call to replace it")


def _query_records(run: PublishedRun) -> list[JSONObject]:
    queries = run_artifacts(run).queries
    return read_query_records(queries) if queries else []
