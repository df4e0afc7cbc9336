"""``--resume``: reuse the scored cases of an earlier dump, ask only for the rest.

A dump can only be resumed by a run of the same setup (``contract.setup``: prompt and scorer
versions, corpus text, request shape, sampling, scoring; a base URL, timeout, label or
concurrency may differ). Anything else is refused with the differing leaves named, because
mixing cases from two setups makes a number that describes neither. Answered cases (scored
or skipped by the policy) are kept; errors and fail-fast skips are asked again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from needle_lib.contract.outcome import is_answered
from needle_lib.contract.schema import (
    SchemaError,
    read_json_file,
    read_recall_dump,
    validate_recall_dump,
)
from needle_lib.contract.setup import SetupMismatch, resume_source, setup_differences
from needle_lib.contract.setup import refusal as setup_refusal
from needle_lib.plugin.recall.plan import RecallCase, RecallPlan
from needle_lib.plugin.resume_notes import add_resume_note, resume_note
from needle_lib.plugin.session import dump_path, result_store
from needle_lib.recall.results import new_dump, stored_answer_fields

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
    if not config.getoption("resume") or _cache_key in config.stash:
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
                previous = read_json_file(path)
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
    explicit = config.getoption("dump")
    if not explicit or config.getoption("resume") or not plan.cases:
        return
    path = Path(explicit)
    if not path.is_file():
        return
    try:
        previous = read_recall_dump(path)
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
