"""``--resume``: reuse the answered cases of the newest earlier run of the same setup, and
ask only for the rest; one mechanism for recall (a dump per pair) and search (a report per
bench).

Both families go through the same three steps, at session start on the controller, before
the new run writes anything:

1. **The source.** ``--dump PATH`` / ``--report PATH`` name it; otherwise it is the newest
   earlier run of the pair or bench (``recall.store`` run files; the ``search/`` directory's
   reports and journals). A killed run is read from its journal (a line cut short by the
   kill is the case that was in flight; it runs again). An empty file is a name another run
   has just reserved and is passed over; any other file that does not read is a usage
   error naming it.
2. **The setup.** Which runs share this run's setup is ``contract.setup``'s answer (prompt
   and scorer versions, corpus or query text, request shape, sampling, scoring; a base URL,
   timeout, label or concurrency may differ). When there are earlier runs and none is of
   this setup, the run is refused with the differing leaves named: mixing cases from two
   setups makes a number that describes neither. The refusal waits until collection shows
   the pair or bench runs at all, so ``-k news`` is never refused over an earlier
   ``agentic_rare`` run of the same query file.
3. **The store.** Which cases count as answered is ``contract.outcome.is_answered``'s:
   PASSED and FAILED cases and policy skips are kept; ERRORs and fail-fast or missing-key
   SKIPs are asked again, because none of them measures the model or engine. The kept
   cases are copied into one SQLite file in the run directory, which every process (xdist
   workers too) looks cases up in: no process keeps an earlier run's cases in memory, and
   a worker never races the new run's journal.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import pytest

from needle_lib.benches.registry import BENCH_NAMES
from needle_lib.benches.runfiles import read_run
from needle_lib.contract.outcome import is_answered
from needle_lib.contract.records import RecallCaseRecord, SearchCaseRecord
from needle_lib.contract.schema import ResumedFromRecord, SchemaError, validate_recall_dump
from needle_lib.contract.setup import SetupMismatch, resume_source, setup_differences
from needle_lib.contract.setup import refusal as setup_refusal
from needle_lib.diskfull import DISK_FULL_EXIT
from needle_lib.kernel.journal import (
    JOURNAL_SUFFIX,
    JournalInUse,
    journal_path,
    refuse_if_written,
    remove_if_abandoned,
)
from needle_lib.plugin.collect import case_of, recall_plan, runs_recall, search_plan
from needle_lib.plugin.html import drop_default_report
from needle_lib.plugin.scorecard import record_of
from needle_lib.plugin.settings import dump_path, result_store, results_dir, run_state, settings
from needle_lib.recall.journal import read_dump, read_recall_run
from needle_lib.recall.plan import RecallCase, RecallPlan
from needle_lib.recall.results import new_dump
from needle_lib.tomlconf import ConfigError

if TYPE_CHECKING:
    from needle_lib.benches.plan import SearchCase, SearchPlan

Family = Literal["recall", "search"]
#: How a refusal names the two sides of a differing leaf.
LABELS = ("earlier run", "this run")

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


# --- step 1 and 2: the source, of either family ----------------------------------------

#: A case of an earlier run, as its file holds it.
KeptCase = RecallCaseRecord | SearchCaseRecord
#: A run file's (setup header, cases), or None when it is not a run of this subject (another
#: bench's or shard's); raises ``pytest.UsageError`` when it does not read.
ReadRun = Callable[[Path], "tuple[Mapping[str, Any], Sequence[KeptCase]] | None"]


@dataclass(frozen=True)
class Decision:
    """The controller's decision for one pair or bench: the run it resumes, or why none."""

    family: Family
    subject: str
    source: Path | None = None
    answered: int = 0
    refusal: str | None = None
    looked_in: str = ""

    def note(self) -> str:
        return resume_note(self.subject, self.source, self.answered, self.looked_in)


def decide(
    family: Family,
    subject: str,
    candidates: Iterable[Path],
    looked_in: str,
    header: Mapping[str, Any],
    read: ReadRun,
) -> tuple[Decision, list[KeptCase]]:
    """Of ``candidates`` (newest first), the first run of ``header``'s setup and its
    answered cases; a refusal naming how the newest differs when there are runs and none is
    of this setup."""

    def runs() -> Iterator[tuple[Path, Mapping[str, Any], tuple[Path, Sequence[KeptCase]]]]:
        for path in candidates:
            try:
                if path.stat().st_size == 0:
                    continue  # a name another run has just reserved: nothing written yet
            except FileNotFoundError:
                continue
            found = read(path)
            if found is not None:
                theirs, cases = found
                yield path, theirs, (path, cases)

    try:
        found = resume_source(runs(), header, LABELS)
    except SetupMismatch as exc:
        return Decision(family, subject, refusal=str(exc), looked_in=looked_in), []
    if found is None:
        return Decision(family, subject, looked_in=looked_in), []
    path, cases = found
    answered = [case for case in cases if is_answered(case)]
    return Decision(family, subject, path, len(answered), looked_in=looked_in), answered


def _read_recall(path: Path) -> tuple[Mapping[str, Any], Sequence[KeptCase]]:
    """A recall dump (a killed run's journal folded in), validated; its header is the dump."""
    try:
        dump = validate_recall_dump(path, read_dump(path))
    except SchemaError as exc:
        raise pytest.UsageError(f"--resume: {exc}") from None
    return dump, dump["cases"]


def _recall_candidates(config: pytest.Config, pair: str) -> tuple[list[Path], str]:
    """The dumps that may hold an earlier run of ``pair``, newest first, and where they
    were looked for: ``--dump PATH`` (or a shard's part), else the pair's stored runs."""
    fixed = dump_path(config, pair)
    if fixed is not None:
        return ([fixed] if fixed.is_file() else []), str(fixed)
    store = result_store(config)
    return store.runs(pair), str(store.run_dir(pair))


def _search_candidates(config: pytest.Config, plan: SearchPlan,
                       bench: str) -> tuple[list[Path], str]:
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


def _search_reader(config: pytest.Config, bench: str) -> ReadRun:
    """Reads a search report or journal, passing over another bench's or shard's run."""
    shard = settings(config).shard
    ours = (shard.index, shard.count) if shard else None

    def read(path: Path) -> tuple[Mapping[str, Any], Sequence[KeptCase]] | None:
        try:
            header, cases = read_run(path)
        except ConfigError as exc:
            raise pytest.UsageError(f"--resume: {exc}") from None
        theirs = header.get("shard")
        shard_of = (theirs.get("index"), theirs.get("count")) if isinstance(theirs, dict) \
            else None
        if header.get("bench") != bench or shard_of != ours:
            return None
        return header, cast("list[SearchCaseRecord]", cases)

    return read


def check_resume_at_start(config: pytest.Config) -> None:
    """Controller, session start: every pair's and bench's source decided, and the kept
    cases copied into the run directory's store, before anything writes. A refusal waits
    for ``ControllerResume``."""
    run = settings(config)
    search = search_plan(config) if run.has_query_set else None
    recall = recall_plan(config) if runs_recall(config) else None
    _refuse_shared_paths(config, recall)
    if recall is not None:
        check_explicit_dump(config, recall)
    if not run.resume or _decisions_key in config.stash:
        return
    decisions: dict[tuple[Family, str], Decision] = {}
    db = _open(config)
    with db:
        if recall is not None:
            for pair, case in {case.pair: case for case in recall.cases}.items():
                candidates, looked_in = _recall_candidates(config, pair)
                decision, answered = decide("recall", pair, candidates, looked_in,
                                            new_dump(recall.header(case)), _read_recall)
                decisions["recall", pair] = decision
                _store(db, decision, answered)
        if search is not None:
            for bench in BENCH_NAMES:
                if search.cases(bench):
                    candidates, looked_in = _search_candidates(config, search, bench)
                    decision, answered = decide("search", bench, candidates, looked_in,
                                                search.header(bench),
                                                _search_reader(config, bench))
                    decisions["search", bench] = decision
                    _store(db, decision, answered)
    db.close()
    config.stash[_decisions_key] = decisions


def _refuse_shared_paths(config: pytest.Config, recall: RecallPlan | None) -> None:
    """A result path a live run writes is refused before this run asks anything (should
    both start at once, the journal's lock refuses the second at its first case)."""
    run = settings(config)
    paths = [Path(run.report)] if run.report and run.has_query_set else []
    if recall is not None:
        paths += [path for pair in dict.fromkeys(case.pair for case in recall.cases)
                  if (path := dump_path(config, pair)) is not None]
    try:
        for path in paths:
            refuse_if_written(path)
    except JournalInUse as exc:
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


# --- step 3: the store every process looks kept cases up in ---------------------------

STORE = "resume.sqlite3"  # in the run directory, beside the run state
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (family TEXT, subject TEXT, path TEXT, answered INTEGER,
                                    PRIMARY KEY (family, subject));
CREATE TABLE IF NOT EXISTS cases (family TEXT, subject TEXT, case_id TEXT, engine TEXT,
                                  record TEXT,
                                  PRIMARY KEY (family, subject, case_id, engine));
"""
#: Fields of a kept search case that the new run settles itself: its outcome (the
#: controller's) and a cleanup failure of the earlier run, which says nothing about this one.
#: A kept recall case is journaled as it was (``recall.dumps``), then filed again.
RESETTLED = ("outcome", "teardown_error")

_decisions_key = pytest.StashKey[dict[tuple[Family, str], Decision]]()
_stored_key = pytest.StashKey["StoredCases"]()

#: (family, pair or bench, case id or query id, engine: "" for recall) of a case
CaseKey = tuple[Family, str, str, str]


def case_key(case: RecallCase | SearchCase) -> CaseKey:
    if isinstance(case, RecallCase):
        return "recall", case.pair, case.target.case_id, ""
    return "search", case.bench, case.query.query_id, case.engine


def _record_key(family: Family, case: KeptCase) -> tuple[str, str]:
    if family == "recall":
        return cast(RecallCaseRecord, case)["case_id"], ""
    search = cast(SearchCaseRecord, case)
    return search["query_id"], search["engine"]


def _store(db: sqlite3.Connection, decision: Decision, answered: list[KeptCase]) -> None:
    """Copy the answered cases where every process of the run finds them."""
    if decision.source is None:
        return
    family = decision.family
    db.executemany(
        "INSERT OR REPLACE INTO cases VALUES (?, ?, ?, ?, ?)",
        (
            (
                family,
                decision.subject,
                *_record_key(family, case),
                json.dumps(
                    case if family == "recall"
                    else {k: v for k, v in case.items() if k not in RESETTLED},
                    ensure_ascii=False,
                ),
            )
            for case in answered
        ),
    )
    db.execute(
        "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)",
        (family, decision.subject, str(decision.source), decision.answered),
    )


def _open(config: pytest.Config) -> sqlite3.Connection:
    db = sqlite3.connect(run_state(config).path.parent / STORE, timeout=60)
    db.executescript(_SCHEMA)
    return db


class StoredCases:
    """One process's view of the kept cases: the keys per pair or bench (for the
    dispatchers, which must not send a kept case to a lane), each record read when its case
    runs."""

    def __init__(self, config: pytest.Config) -> None:
        path = run_state(config).path.parent / STORE
        self._db = sqlite3.connect(path, timeout=60) if path.is_file() else None
        self._keys: dict[tuple[str, str], set[tuple[str, str]]] = {}
        #: (family, subject) → (the run it resumes, its answered cases)
        self.sources: dict[tuple[str, str], tuple[str, int]] = {}
        if self._db is not None:
            self.sources = {
                (family, subject): (source, answered)
                for family, subject, source, answered in self._db.execute(
                    "SELECT family, subject, path, answered FROM sources"
                )
            }

    def keys(self, family: Family, subject: str) -> set[tuple[str, str]]:
        """(case id, engine) of every case kept for ``subject``."""
        if (family, subject) not in self._keys:
            rows = (
                self._db.execute(
                    "SELECT case_id, engine FROM cases WHERE family = ? AND subject = ?",
                    (family, subject),
                )
                if self._db is not None
                else ()
            )
            self._keys[family, subject] = {(case_id, engine) for case_id, engine in rows}
        return self._keys[family, subject]

    def holds(self, key: CaseKey) -> bool:
        family, subject, case_id, engine = key
        return (case_id, engine) in self.keys(family, subject)

    def record(self, key: CaseKey) -> KeptCase | None:
        if self._db is None or not self.holds(key):
            return None
        (text,) = self._db.execute(
            "SELECT record FROM cases WHERE family = ? AND subject = ? AND case_id = ? "
            "AND engine = ?",
            key,
        ).fetchone()
        record: KeptCase = json.loads(text)
        return record

    def recall_records(self, pair: str) -> list[RecallCaseRecord]:
        """Every case kept for ``pair``, in the order the earlier run had them."""
        if self._db is None:
            return []
        rows = self._db.execute(
            "SELECT record FROM cases WHERE family = 'recall' AND subject = ? ORDER BY rowid",
            (pair,),
        )
        return [json.loads(text) for (text,) in rows]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def stored_cases(config: pytest.Config) -> StoredCases | None:
    """This process's kept cases, or None when the run does not resume."""
    if not settings(config).resume:
        return None
    if _stored_key not in config.stash:
        stored = config.stash[_stored_key] = StoredCases(config)
        config.add_cleanup(stored.close)
    return config.stash[_stored_key]


def is_kept(config: pytest.Config, case: RecallCase | SearchCase) -> bool:
    """Whether ``case`` was answered by the run this one resumes (no record is read)."""
    stored = stored_cases(config)
    return stored is not None and stored.holds(case_key(case))


def kept_case(config: pytest.Config, case: RecallCase | SearchCase) -> KeptCase | None:
    """``case``'s record from the run this one resumes, or None when it is to be asked."""
    stored = stored_cases(config)
    return stored.record(case_key(case)) if stored is not None else None


def resumed(config: pytest.Config, pair: str) -> tuple[Path, list[RecallCaseRecord]] | None:
    """The dump ``pair`` resumes from and its answered cases, if it resumes one (the
    controller journals them as the run's first lines)."""
    stored = stored_cases(config)
    if stored is None or ("recall", pair) not in stored.sources:
        return None
    source, _ = stored.sources["recall", pair]
    return Path(source), stored.recall_records(pair)


def resumed_from(config: pytest.Config, bench: str) -> ResumedFromRecord | None:
    """The header's ``resumed_from``: the run ``bench`` resumes (None: it resumes nothing)."""
    stored = stored_cases(config)
    if stored is None or ("search", bench) not in stored.sources:
        return None
    source, answered = stored.sources["search", bench]
    return ResumedFromRecord(run=source, answered_cases=answered)


def _recall_pairs(config: pytest.Config, ids: list[str]) -> set[str]:
    """The recall pairs whose cases are among node ``ids`` (``test_recall[<case id>]``,
    with xdist's ``@group`` suffix under ``--dist loadgroup``)."""
    params = {nodeid[nodeid.index("[") + 1:nodeid.rindex("]")] for nodeid in ids
              if "test_recall.py::" in nodeid and "[" in nodeid}
    return {case.pair for case in recall_plan(config).cases if case.id in params}


class ControllerResume:
    """Controller plugin: once collection shows which pairs and benches run, refuse the
    ones whose earlier runs are all of another setup (exit 4), and note what each one
    resumes (the controller writes the notes in its ``needle resume`` section).

    At the end it removes each search journal it resumed (a killed run's) once this run's
    report holds every case kept from it: left in place, the journal would be a second copy
    of those cases for a later ``--resume``, ``needle merge`` or ``needle publish`` to pick
    up. It stays when this run was interrupted or did not record every kept case (a ``-k``
    or ``--engines`` that leaves some out, ``-x``), and when a live process still writes it.
    (A killed recall run's journal is settled by the next run of its pair,
    ``recall.journal.settle_abandoned``, resumed or not.)"""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._checked: set[tuple[Family, str]] = set()
        #: benches this run wrote a report of, and the kept cases it recorded in them
        self._reported: set[str] = set()
        self._recorded: set[tuple[str, str, str]] = set()

    def check(self, subjects: Iterable[tuple[Family, str]]) -> None:
        decisions = self._config.stash.get(_decisions_key, {})
        for subject in sorted(set(subjects) - self._checked):
            self._checked.add(subject)
            decision = decisions.get(subject)
            if decision is None:
                continue
            if decision.refusal is not None:
                drop_default_report(self._config)  # a refused run leaves no page behind
                raise pytest.UsageError(decision.refusal)
            add_resume_note(self._config, decision.note())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.check(case_key(case)[:2] for item in session.items
                   if (case := case_of(item)) is not None)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist: the controller sees node ids only; a bench runs when its module does, a
        recall pair when one of its cases' ids does (the plan, built here at session start,
        names each case's pair), so a ``-k`` that leaves a pair out is not refused for it."""
        modules = {Path(nodeid.split("::")[0]).name for nodeid in ids}
        decisions = self._config.stash.get(_decisions_key, {})
        pairs = _recall_pairs(self._config, ids) if "test_recall.py" in modules else set()
        self.check(subject for subject in decisions
                   if (subject[0] == "recall" and subject[1] in pairs)
                   or (subject[0] == "search" and f"test_{subject[1]}.py" in modules))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is None or record["kind"] == "recall":
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
        for (family, bench), (source, _) in stored.sources.items():
            journal = Path(source)
            if (
                family != "search"
                or not journal.name.endswith(JOURNAL_SUFFIX)
                or bench not in self._reported
                or any((bench, *key) not in self._recorded
                       for key in stored.keys("search", bench))
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
