"""``--resume`` for search runs: reuse the answered cases of the newest earlier run of the
same setup; search and judge only the rest.

An earlier run is read from its report, or from its journal when it was killed (a line cut
short by the kill is the case that was in flight; it runs again). Which runs share this
run's setup is ``contract.setup``'s answer, as for recall, and which cases count as
answered is ``contract.outcome.is_answered``'s: PASSED and FAILED cases are kept; ERRORs (a
failed search, a judge that failed) and SKIPs (a missing key, fail-fast, no judge) run
again, because none of them is a measurement of the engine.

The controller picks each bench's source once, at session start, before the new run writes
anything (``--report PATH`` names the very file the new run overwrites), and copies the
source's answered cases into the run directory's SQLite file. Every process (xdist workers
too) looks cases up there: a worker never races the new run's journal, and no process keeps
an earlier run's records in memory. A refusal (only runs of other setups exist) waits until
collection shows the bench runs at all, so ``-k news`` is never refused over an earlier
``agentic_rare`` run of the same query file.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from needle_lib.benches.journal_lock import remove_if_abandoned
from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.benches.runfiles import JOURNAL_SUFFIX, journal_path, read_run
from needle_lib.contract.outcome import is_answered
from needle_lib.contract.records import SearchCaseRecord
from needle_lib.contract.setup import SetupMismatch, resume_source
from needle_lib.plugin.diskfull import DISK_FULL_EXIT
from needle_lib.plugin.reports import drop_default_report
from needle_lib.plugin.resume_notes import add_resume_note, resume_note
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.search.plan import SearchCase, SearchPlan
from needle_lib.plugin.session import results_dir, run_state, search_plan
from needle_lib.tomlconf import ConfigError

STORE = "search-resume.sqlite3"  # in the run directory, beside the run state
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (bench TEXT PRIMARY KEY, path TEXT, answered INTEGER);
CREATE TABLE IF NOT EXISTS cases (bench TEXT, query_id TEXT, engine TEXT, record TEXT,
                                  PRIMARY KEY (bench, query_id, engine));
"""
#: Fields of a kept case that the new run settles itself: its outcome (the controller's) and
#: a cleanup failure of the earlier run, which says nothing about this one.
RESETTLED = ("outcome", "teardown_error")

_found_key = pytest.StashKey[dict[str, "BenchResume"]]()
_stored_key = pytest.StashKey["StoredCases"]()


@dataclass(frozen=True)
class BenchResume:
    """The controller's decision for one bench: the run it resumes, or why none."""

    bench: str
    source: Path | None = None
    answered: int = 0
    refusal: str | None = None
    looked_in: str = ""

    def note(self) -> str:
        return resume_note(self.bench, self.source, self.answered, self.looked_in)


def resuming(config: pytest.Config) -> bool:
    return bool(config.getoption("resume") and config.getoption("queries"))


def plan_resume(config: pytest.Config) -> None:
    """Controller, session start: each bench's source, its answered cases copied into the
    run directory for every process. Refusals wait for ``ControllerResume``."""
    if not resuming(config) or _found_key in config.stash:
        return
    plan = search_plan(config)
    store = _open(config)
    found: dict[str, BenchResume] = {}
    with store:
        for bench in BENCH_NAMES:
            if not plan.cases(bench):
                continue
            found[bench], answered = _decide(config, plan, bench)
            _store(store, found[bench], answered)
    store.close()
    config.stash[_found_key] = found


def _decide(
    config: pytest.Config, plan: SearchPlan, bench: str
) -> tuple[BenchResume, list[dict[str, Any]]]:
    """The newest earlier run of ``bench`` from this setup (and shard) and its answered
    cases; a refusal naming how the newest differs when earlier runs exist and none is of
    this setup."""
    shard = _shard_of(config)
    candidates, looked_in = _candidates(config, plan, bench)

    def runs() -> Iterator[tuple[Path, dict[str, Any], tuple[Path, list[dict[str, Any]]]]]:
        for path in candidates:
            if path.stat().st_size == 0:
                continue  # a name another run has just reserved: nothing written yet
            try:
                header, cases = read_run(path)
            except ConfigError as exc:
                raise pytest.UsageError(f"--resume: {exc}") from None
            if header.get("bench") == bench and _shard_of_header(header) == shard:
                yield path, header, (path, cases)  # not another bench's or shard's run

    try:
        found = resume_source(runs(), plan.header(bench), ("earlier run", "this run"))
    except SetupMismatch as exc:
        return BenchResume(bench, refusal=str(exc), looked_in=looked_in), []
    if found is None:
        return BenchResume(bench, looked_in=looked_in), []
    path, cases = found
    answered = [case for case in cases if is_answered(case)]
    return BenchResume(bench, path, len(answered), looked_in=looked_in), answered


def _candidates(config: pytest.Config, plan: SearchPlan, bench: str) -> tuple[list[Path], str]:
    """Reports and journals that may hold an earlier run of ``bench``, newest first, and
    where they were looked for. ``--report PATH``: that file (a second bench's beside it)."""
    explicit = config.getoption("report")
    if explicit:
        first = Path(explicit)
        second = first.with_name(f"{first.stem}__{plan.pair(bench)}{first.suffix}")
        paths = [
            p for report in (first, second) for p in (report, journal_path(report)) if p.is_file()
        ]
        return paths, str(first)
    directory = results_dir(config) / "search"
    name = re.compile(
        re.escape(plan.pair(bench)) + r"__(\d{8}-\d{6})"
        r"(?:\.shard-\d+-of-\d+)?(?:-(\d+))?(\.json|" + re.escape(JOURNAL_SUFFIX) + r")"
    )
    runs = []
    for path in directory.glob(f"{plan.pair(bench)}__*") if directory.is_dir() else ():
        match = name.fullmatch(path.name)
        if match and path.is_file():
            # by start time, then number within the second; a report before its journal
            # (a run killed between writing its report and removing its journal)
            runs.append(((match[1], int(match[2] or 1), match[3] == ".json"), path))
    return [path for _, path in sorted(runs, reverse=True)], str(directory)


def _shard_of(config: pytest.Config) -> tuple[int, int] | None:
    shard = config.getoption("shard")
    return (shard.index, shard.count) if shard else None


def _shard_of_header(header: dict[str, Any]) -> tuple[Any, Any] | None:
    shard = header.get("shard")
    return (shard.get("index"), shard.get("count")) if isinstance(shard, dict) else None


def _store(
    store: sqlite3.Connection, decision: BenchResume, answered: list[dict[str, Any]]
) -> None:
    """Copy the answered cases where every process of the run finds them."""
    if decision.source is None:
        return
    store.executemany(
        "INSERT OR REPLACE INTO cases VALUES (?, ?, ?, ?)",
        (
            (
                decision.bench,
                case["query_id"],
                case["engine"],
                json.dumps(
                    {k: v for k, v in case.items() if k not in RESETTLED}, ensure_ascii=False
                ),
            )
            for case in answered
        ),
    )
    store.execute(
        "INSERT OR REPLACE INTO sources VALUES (?, ?, ?)",
        (decision.bench, str(decision.source), decision.answered),
    )


def _open(config: pytest.Config) -> sqlite3.Connection:
    store = sqlite3.connect(run_state(config).path.parent / STORE, timeout=60)
    store.executescript(_SCHEMA)
    return store


class StoredCases:
    """One process's view of the kept cases: the keys per bench (for the dispatcher, which
    must not send a kept case to a lane), each record read when its case runs."""

    def __init__(self, config: pytest.Config) -> None:
        path = run_state(config).path.parent / STORE
        self._db = sqlite3.connect(path, timeout=60) if path.is_file() else None
        self._keys: dict[str, set[tuple[str, str]]] = {}
        self.sources: dict[str, tuple[str, int]] = {}
        if self._db is not None:
            self.sources = {
                bench: (source, answered)
                for bench, source, answered in self._db.execute(
                    "SELECT bench, path, answered FROM sources"
                )
            }

    def keys(self, bench: str) -> set[tuple[str, str]]:
        if bench not in self._keys:
            rows = (
                self._db.execute("SELECT query_id, engine FROM cases WHERE bench = ?", (bench,))
                if self._db is not None
                else ()
            )
            self._keys[bench] = {(query_id, engine) for query_id, engine in rows}
        return self._keys[bench]

    def holds(self, case: SearchCase) -> bool:
        return (case.query.query_id, case.engine) in self.keys(case.bench)

    def record(self, case: SearchCase) -> SearchCaseRecord | None:
        if self._db is None or not self.holds(case):
            return None
        (text,) = self._db.execute(
            "SELECT record FROM cases WHERE bench = ? AND query_id = ? AND engine = ?",
            (case.bench, case.query.query_id, case.engine),
        ).fetchone()
        return cast(SearchCaseRecord, json.loads(text))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def stored_cases(config: pytest.Config) -> StoredCases | None:
    """This process's kept cases, or None when the run does not resume."""
    if not resuming(config):
        return None
    if _stored_key not in config.stash:
        stored = config.stash[_stored_key] = StoredCases(config)
        config.add_cleanup(stored.close)
    return config.stash[_stored_key]


def stored_case(config: pytest.Config, case: SearchCase) -> SearchCaseRecord | None:
    """``case``'s answered record from the run it resumes, if any."""
    stored = stored_cases(config)
    return stored.record(case) if stored is not None else None


def is_kept(config: pytest.Config, case: SearchCase) -> bool:
    """Whether ``case`` was answered by the run this one resumes (no record is read)."""
    stored = stored_cases(config)
    return stored is not None and stored.holds(case)


def resumed_from(config: pytest.Config, bench: str) -> dict[str, Any]:
    """The header field naming the run ``bench`` resumes (none when it resumes nothing)."""
    stored = stored_cases(config)
    if stored is None or bench not in stored.sources:
        return {}
    source, answered = stored.sources[bench]
    return {"resumed_from": {"run": source, "answered_cases": answered}}


class ControllerResume:
    """Controller plugin: once collection shows which benches run, refuse the ones whose
    earlier runs are all of another setup (exit 4), and note what each one resumes (the
    controller writes the notes, with recall's, in its ``needle resume`` section).

    At the end it removes each journal it resumed (a killed run's) once this run's report
    holds every case kept from it: left in place, the journal would be a second copy of
    those cases for a later ``--resume``, ``needle merge`` or ``needle publish`` to pick up.
    It stays when this run was interrupted or did not record every kept case (a ``-k`` or
    ``--engines`` that leaves some out, ``-x``), and when a live process still writes it."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._checked: set[str] = set()
        #: benches this run wrote a report of, and the kept cases it recorded in them
        self._reported: set[str] = set()
        self._recorded: set[tuple[str, str, str]] = set()

    def check(self, benches: Iterable[str]) -> None:
        found = self._config.stash.get(_found_key, {})
        for bench in sorted(set(benches) - self._checked):
            self._checked.add(bench)
            decision = found.get(bench)
            if decision is None:
                continue
            if decision.refusal is not None:
                drop_default_report(self._config)  # a refused run leaves no page behind
                raise pytest.UsageError(decision.refusal)
            add_resume_note(self._config, decision.note())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        params = (getattr(item, "callspec", None) for item in session.items)
        self.check(
            case.bench
            for p in params
            if p is not None and isinstance(case := p.params.get("search_case"), SearchCase)
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        modules = {Path(nodeid.split("::")[0]).name for nodeid in ids}
        self.check(bench for bench in BENCH_NAMES if f"test_{bench}.py" in modules)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is None or record["kind"] != "search":
            return
        bench, case = record["header"]["bench"], record["case"]
        self._reported.add(bench)
        if case.get("resumed"):
            self._recorded.add((bench, case["query_id"], case["engine"]))

    @pytest.hookimpl(trylast=True)  # after the controller has written this run's reports
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        stored = stored_cases(self._config)
        if stored is None or session.exitstatus in (pytest.ExitCode.INTERRUPTED,
                                                     DISK_FULL_EXIT):
            return  # this run's reports were not written: the earlier journal stays
        synced = False
        for bench, (source, _) in stored.sources.items():
            journal = Path(source)
            if (
                not journal.name.endswith(JOURNAL_SUFFIX)
                or bench not in self._reported
                or any((bench, *key) not in self._recorded for key in stored.keys(bench))
            ):
                continue
            if not synced:  # the reports' names on disk before their cases' only other copy goes
                _sync_directory(_report_directory(self._config))
                synced = True
            if remove_if_abandoned(journal):
                add_resume_note(
                    self._config,
                    f"--resume: {bench}: removed {journal}, the killed run's journal: "
                    "this run's report holds every case it kept",
                )


def _report_directory(config: pytest.Config) -> Path:
    explicit = config.getoption("report")
    return Path(explicit).parent if explicit else results_dir(config) / "search"


def _sync_directory(directory: Path) -> None:
    """fsync a directory, so a file renamed into it survives a machine crash."""
    if os.name != "posix":
        return  # no directory handles to sync; the rename is as durable as it gets
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
