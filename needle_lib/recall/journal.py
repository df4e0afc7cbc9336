"""A recall run's journal, and its dump as the fold of it.

A run appends each settled case to ``<dump>.partial.jsonl`` beside its dump
(``kernel.journal``), the header first (the run's setup, and ``resumed_from`` when it
resumes one; the resumed cases are journaled too, so the journal alone is the run). The dump
is written as the fold of the journal at the run's start (so the latest view and ``needle
status`` find the run), at its end and when it is interrupted; rewriting the whole dump
after every case made a run's bookkeeping grow with the square of its cases.

A killed run leaves its dump as the run's start wrote it, with the journal beside it:
every reader of a dump (``read_dump``) folds the journal in, so ``--resume``, ``needle
status``, ``merge``, ``rescore`` and the dashboards see every case the run settled.

A journal is kept while it is the only record of its cases. The next run of the same pair
that finishes (resumed or not) settles each earlier run's abandoned journal
(``settle_abandoned``): the journal's fold is written into that run's own dump, which reads
back exactly as before, and only then is the journal removed. A journal whose writer is
alive is never touched (``kernel.journal``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, cast

from needle_lib.contract.records import RecallCaseRecord, RecallDump, RecallHeader
from needle_lib.contract.schema import (
    SchemaError,
    journal_entries,
    read_json_file,
    validate_recall_dump,
)
from needle_lib.jsonio import write_json_atomic
from needle_lib.kernel.journal import journal_path, remove_if_abandoned
from needle_lib.recall.results import finalize, new_dump
from needle_lib.recall.store import STORED_AS

#: Header keys the dump keeps after its summary, where a run has always written them.
RESUMED_FROM: Final = "resumed_from"


def fold(header: RecallHeader, cases: Iterable[RecallCaseRecord], *,
         in_progress: bool) -> RecallDump:
    """The dump of a run from its header and its cases in journal order: a later case of
    the same id wins (a case re-filed with its teardown error), and cases are sorted by
    place in the corpus."""
    base = header.copy()
    base.pop(RESUMED_FROM, None)
    dump = new_dump(base)
    latest = {case["case_id"]: case for case in cases}
    dump["cases"] = sorted(latest.values(), key=lambda c: (c["start_line"], c["case_id"]))
    if RESUMED_FROM in header:
        dump[RESUMED_FROM] = header[RESUMED_FROM]
    return finalize(cast(RecallDump, dump), in_progress=in_progress)


def fold_journal(path: Path, *, in_progress: bool) -> RecallDump:
    """The dump a recall journal folds to; a journal without a header is a SchemaError.
    Its lines are what this run's ``RecallDumps`` wrote (a run's header, its case
    records); the fold is validated whole by its readers (``read_recall_run``)."""
    header: RecallHeader | None = None
    cases: list[RecallCaseRecord] = []
    for number, kind, record in journal_entries(path):
        if kind == "header":
            header = cast(RecallHeader, record)
        elif not isinstance(record.get("case_id"), str) or \
                not isinstance(record.get("start_line"), int):
            raise SchemaError(f"{path}:{number}: a recall case needs a case_id and a "
                              "start_line")
        else:
            cases.append(cast(RecallCaseRecord, record))
    if header is None:
        raise SchemaError(f"{path}: journal has no header line")
    return fold(header, cases, in_progress=in_progress)


def read_dump(path: Path) -> Any:
    """The JSON in ``path``, unchecked; a recall dump of a run that did not finish (killed,
    or still going) with its journal folded in. A finished dump is read as it is (its
    journal, if a kill between the two writes left one, says nothing more), and so is any
    other file (a search report's journal is its own run's)."""
    journal = journal_path(path.resolve())
    try:
        data = read_json_file(path)
    except SchemaError:
        if not journal.is_file():
            raise
        data = None  # created, not yet written: the journal is the run
    unfinished = data is None or (isinstance(data, dict) and data.get("benchmark") == "recall"
                                  and data.get("in_progress") is not False)
    if unfinished and not journal.is_file() and isinstance(data, dict) \
            and isinstance(data.get(STORED_AS), str):
        # a latest view that is a copy (no symlinks here): its run file's journal
        journal = journal_path(path.parent / data[STORED_AS])
    if not unfinished or not journal.is_file():
        return data
    folded = fold_journal(journal, in_progress=True)
    if isinstance(data, dict) and STORED_AS in data:
        folded[STORED_AS] = data[STORED_AS]
    return folded


def read_recall_run(path: Path) -> RecallDump:
    """The recall dump in ``path`` (its journal folded in), validated."""
    data = read_dump(path)
    if isinstance(data, dict) and data.get("benchmark", "recall") != "recall":
        raise SchemaError(f"{path}: not a recall dump (benchmark={data.get('benchmark')!r})")
    return validate_recall_dump(path, data)


def settle_abandoned(run_file: Path) -> bool:
    """Fold the journal a killed run left beside ``run_file`` into that dump, durably, then
    remove the journal; whether it went (not while its writer lives, nor when the dump does
    not read)."""
    journal = journal_path(run_file)
    try:
        if journal.stat().st_size == 0:
            return False  # created this instant by a starting run, which locks it next
    except FileNotFoundError:
        return False

    def settle() -> None:
        dump = read_dump(run_file)
        if isinstance(dump, dict) and dump.get("in_progress") is False:
            return  # finished: the dump holds every case (a kill came before the unlink)
        # compact, as the in-progress dump it replaces (``recall.store.write_dump``)
        write_json_atomic(run_file, dump, indent=None, durable=True)

    try:
        return remove_if_abandoned(journal, settle)
    except SchemaError:
        return False  # a journal that does not read stays for the user to see
