"""``--resume``: reuse the answered cases of the newest earlier run of the same setup, and
ask only for the rest; recall (a dump per pair) and search (a report or journal per bench).

Which runs share this run's setup is ``contract.setup``'s answer (prompt and scorer
versions, corpus or query text, request shape, sampling, scoring; a base URL, timeout,
label or concurrency may differ), and which cases count as answered is
``contract.outcome.is_answered``'s: PASSED and FAILED cases and policy skips are kept;
ERRORs and fail-fast or missing-key SKIPs are asked again, because none of them measures
the model or engine. A run whose earlier runs are all of another setup is refused with the
differing leaves named: mixing cases from two setups makes a number that describes neither.

**Recall**: each pair's dump is the one ``--dump`` names, else the newest stored run of the
pair from this setup; found once per process (at session start on the controller, else at
collection).

**Search**: an earlier run is read from its report, or from its journal when it was killed
(a line cut short by the kill is the case that was in flight; it runs again). The
controller picks each bench's source once, at session start, before the new run writes
anything (``--report PATH`` names the very file the new run overwrites), and copies the
source's answered cases into the run directory's SQLite file. Every process (xdist workers
too) looks cases up there: a worker never races the new run's journal, and no process keeps
an earlier run's records in memory. A refusal waits until collection shows the bench runs
at all, so ``-k news`` is never refused over an earlier ``agentic_rare`` run of the same
query file.

What ``--resume`` did is said in one ``needle resume`` section of the terminal summary,
one line per pair or bench, in the same words for both, and also when nothing was resumed:
a run that quietly found no earlier run of its setup asks every case again, and the user
would otherwise only learn it from the bill.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.benches.runfiles import read_run
from needle_lib.contract.outcome import is_answered
from needle_lib.contract.records import BenchCaseRecord, SearchCaseRecord
from needle_lib.contract.schema import (
    SchemaError,
    validate_recall_dump,
)
from needle_lib.contract.setup import SetupMismatch, resume_source, setup_differences
from needle_lib.contract.setup import refusal as setup_refusal
from needle_lib.diskfull import DISK_FULL_EXIT
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_path, remove_if_abandoned
from needle_lib.plugin.collect import recall_plan, runs_recall, search_case_of, search_plan
from needle_lib.plugin.html import drop_default_report
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.settings import (
    dump_path,
    result_store,
    results_dir,
    run_state,
    settings,
)
from needle_lib.recall.journal import read_dump, read_recall_run
from needle_lib.recall.plan import RecallCase, RecallPlan
from needle_lib.recall.results import new_dump, stored_answer_fields
from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:
    from needle_lib.benches.plan import SearchCase, SearchPlan

_notes_key = pytest.StashKey[list[str]]()


def resume_note(subject: str, source: Path | None, answered: int, looked_in: str) -> str:
    """The line for ``subject`` (a pair or a bench): the run it resumes, or where none was."""
    if source is not None:
        return (
            f"--resume: {subject}: reusing {answered} answered case(s) of {source}; "
            "the rest are asked"
        )
    return f"--resume: {subject}: no earlier run of this setup in {looked_in}; every case is asked"


def add_resume_note(config: pytest.Config, note: str) -> None:
    notes = config.stash.setdefault(_notes_key, [])
    if note not in notes:
        notes.append(note)


def resume_notes(config: pytest.Config) -> list[str]:
    """The lines of the ``needle resume`` section."""
    return config.stash.get(_notes_key, [])


def check_resume_at_start(config: pytest.Config) -> None:
    """Controller, session start: every earlier run this one resumes, found (or refused)
    before anything writes."""
    run = settings(config)
    if run.has_query_set:
        plan_search_resume(config, search_plan(config))
    if runs_recall(config):
        plan = recall_plan(config)
        check_resume(config, plan)
        check_explicit_dump(config, plan)


# --- recall ---------------------------------------------------------------------------

_cache_key = pytest.StashKey[dict[str, "PairResume"]]()


@dataclass(frozen=True)
class PairResume:
    """One pair's resume: the dump it continues and that dump's answered cases by id, or
    (``source`` None) where no dump was found."""

    source: Path | None
    kept: dict[str, dict[str, Any]]
    looked_in: str


def check_resume(config: pytest.Config, plan: RecallPlan) -> None:
    """Find each pair's dump to resume: the one ``--dump`` names, else the newest of the
    pair's stored runs from the same setup. Refuse (usage error) when the pair has dumps
    and none comes from this setup. Runs once per process (at session start on the
    controller, else at collection)."""
    if not settings(config).resume or _cache_key in config.stash:
        return
    store = result_store(config)
    found: dict[str, PairResume] = {}
    for case in plan.cases:
        if case.pair in found:
            continue
        fixed = dump_path(config, case.pair)
        candidates = ([fixed] if fixed.is_file() else []) if fixed else store.runs(case.pair)
        source = _same_setup(candidates, new_dump(plan.header(case)), strict=fixed is not None)
        looked_in = str(fixed or store.run_dir(case.pair))
        if source is None:
            found[case.pair] = PairResume(None, {}, looked_in)
            continue
        path, previous = source
        kept = {c["case_id"]: c for c in previous.get("cases", []) if is_answered(c)}
        found[case.pair] = PairResume(path, kept, looked_in)
    config.stash[_cache_key] = found


def _same_setup(
    candidates: list[Path], header: dict[str, Any], *, strict: bool
) -> tuple[Path, dict[str, Any]] | None:
    """The newest candidate dump from ``header``'s setup; a usage error naming the
    differences from the newest when there are candidates and none matches."""

    def readable() -> Iterator[tuple[Path, dict[str, Any], tuple[Path, dict[str, Any]]]]:
        for path in candidates:
            try:
                previous = read_dump(path)
            except SchemaError as exc:
                if strict:
                    raise pytest.UsageError(f"--resume: {exc}") from None
                continue  # a run file another run has only just created
            try:
                validate_recall_dump(path, previous)
            except SchemaError as exc:
                raise pytest.UsageError(f"--resume: {exc}") from None
            yield path, previous, (path, previous)

    try:
        return resume_source(readable(), header, ("dump", "this run"))
    except SetupMismatch as exc:
        raise pytest.UsageError(str(exc)) from None


def check_explicit_dump(config: pytest.Config, plan: RecallPlan) -> None:
    """``--dump PATH`` holding another setup's run is refused, never overwritten (with
    ``--resume`` the resume check refuses it instead)."""
    run = settings(config)
    explicit = run.dump
    if not explicit or run.resume or not plan.cases:
        return
    path = Path(explicit)
    if not path.is_file():
        return
    try:
        previous = read_recall_run(path)
    except SchemaError as exc:
        raise pytest.UsageError(
            f"--dump {path} holds something that is not a Needle dump; refusing to "
            f"overwrite it ({exc})"
        ) from None
    diffs = setup_differences(previous, new_dump(plan.header(plan.cases[0])))
    if diffs:
        raise pytest.UsageError(
            setup_refusal(
                f"--dump {path} holds a run of a different setup; refusing to overwrite it "
                "(choose another path, or delete it)",
                diffs,
                ("dump", "this run"),
            )
        )


def resumed(config: pytest.Config, pair: str) -> tuple[Path, list[dict[str, Any]]] | None:
    """The dump ``pair`` resumes from and its scored cases, if it resumes one."""
    entry = config.stash.get(_cache_key, {}).get(pair)
    if entry is None or entry.source is None:
        return None
    return entry.source, list(entry.kept.values())


def note_resumed(config: pytest.Config, pairs: Iterable[str]) -> None:
    """Say what each of ``pairs`` (the ones the run wrote) resumed, or that it found none."""
    found = config.stash.get(_cache_key, {})
    for pair in pairs:
        entry = found.get(pair)
        if entry is not None:
            note = resume_note(pair, entry.source, len(entry.kept), entry.looked_in)
            add_resume_note(config, note)


def stored_answer(config: pytest.Config, case: RecallCase) -> dict[str, Any] | None:
    """The answer fields (``recall.results.answer_fields``) the resumed run stored for
    ``case``, or None when it is to be asked."""
    entry = config.stash.get(_cache_key, {}).get(case.pair)
    stored = entry.kept.get(case.target.case_id) if entry else None
    return stored_answer_fields(stored) if stored is not None else None


# --- search ---------------------------------------------------------------------------

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
    run = settings(config)
    return run.resume and run.has_query_set


def plan_search_resume(config: pytest.Config, plan: SearchPlan) -> None:
    """Controller, session start: each bench's source, its answered cases copied into the
    run directory for every process. Refusals wait for ``ControllerResume``."""
    if not resuming(config) or _found_key in config.stash:
        return
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
) -> tuple[BenchResume, list[BenchCaseRecord]]:
    """The newest earlier run of ``bench`` from this setup (and shard) and its answered
    cases; a refusal naming how the newest differs when earlier runs exist and none is of
    this setup."""
    shard = _shard_of(config)
    candidates, looked_in = _candidates(config, plan, bench)

    def runs() -> Iterator[tuple[Path, dict[str, Any], tuple[Path, list[BenchCaseRecord]]]]:
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
    explicit = settings(config).report
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
    shard = settings(config).shard
    return (shard.index, shard.count) if shard else None


def _shard_of_header(header: dict[str, Any]) -> tuple[Any, Any] | None:
    shard = header.get("shard")
    return (shard.get("index"), shard.get("count")) if isinstance(shard, dict) else None


def _store(
    store: sqlite3.Connection, decision: BenchResume, answered: list[BenchCaseRecord]
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
        self.check(case.bench for item in session.items
                   if (case := search_case_of(item)) is not None)

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
    explicit = settings(config).report
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
