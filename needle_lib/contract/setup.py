""""Same setup": which fields two runs must share for their cases to be interchangeable.

``--resume`` reuses an earlier dump's answers, ``needle merge`` joins shard parts, and
``needle compare`` pairs runs target by target; all three ask the same question, answered
here once. Every header leaf counts — prompt and scorer versions, corpus text, the request
shape, sampling, scoring, the judge — except *bookkeeping*: where, by whom, how fast or in
which part a run happened (a base URL, a label, a timeout, concurrency, a config file's
path, the package version, shard and progress fields). Those never change what a model or
engine was asked, so they never block a resume or a merge. Refusals name the differing
leaf keys, one per line.

A search run's engine list is bookkeeping (a run may be split by engine), but the mode an
engine ran in is not (``engine_modes``: tavily's depth, Google's locale): it is compared
for the engines both runs asked, a header without it read as the default of its day.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, TypeVar

from needle_lib.contract.records import RecallDump
from needle_lib.contract.schema import SearchHeaderRecord, engine_modes_of
from needle_lib.errors import UsageError
from needle_lib.jsonio import JSON, JSONObject

Run = TypeVar("Run")

#: What two runs' setups are read from: a recall dump (its setup is its top level) or a
#: search run's header, as built (the TypedDicts) or read back from a file (JSON, read
#: only: a file of another Needle version may hold keys neither declares, and every leaf
#: counts).
Header: TypeAlias = "RecallDump | SearchHeaderRecord | Mapping[str, JSON]"

#: Model request keys that say where, who or how fast, not what is asked.
REQUEST_BOOKKEEPING = frozenset({"label", "config", "source", "base_url", "auth", "timeout",
                                 "concurrency"})

#: Run-state fields of a dump or report: recomputed by whoever writes it.
RUN_STATE = frozenset({"cases", "summary", "in_progress", "complete", "valid", "shard",
                       "resumed_from", "rescored_from"})

#: Dotted header leaves (and subtrees) that are bookkeeping.
BOOKKEEPING = frozenset({
    *RUN_STATE,
    "schema_version", "started_at", "clock", "package", "notes", "expected_cases", "engines",
    "stored_as", "default_selection",
    "corpus.config", "queries.path", "model.key", "model.label", "judge.concurrency",
    # what decided a repo corpus's budget (the budget and the text it chose are setup)
    "corpus.repo.budget_source",
    # what the judge's server answered with, gathered from the cases (``judge.identity``)
    "judge.served_models", "judge.outputs",
    *(f"model.request.{key}" for key in REQUEST_BOOKKEEPING),
})


@dataclass(frozen=True)
class Difference:
    """One header leaf on which two runs differ (``None`` where a side lacks it)."""

    field: str
    ours: object
    theirs: object

    def describe(self, labels: tuple[str, str]) -> str:
        return f"{self.field}: {self.ours!r} ({labels[0]}) vs {self.theirs!r} ({labels[1]})"


def leaf_differences(a: object, b: object, where: str = "",
                     skip: frozenset[str] = frozenset()) -> list[Difference]:
    """Every dotted leaf on which ``a`` and ``b`` differ, ``skip`` paths left out."""
    if where in skip:
        return []
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        found: list[Difference] = []
        for key in sorted(a.keys() | b.keys(), key=str):
            path = f"{where}.{key}" if where else str(key)
            found += leaf_differences(a.get(key), b.get(key), path, skip)
        return found
    return [] if a == b else [Difference(where, a, b)]


def setup_differences(ours: Header, theirs: Header) -> list[Difference]:
    """Where two dump or report headers differ in setup (bookkeeping left out)."""
    ours_modes, theirs_modes = _shared_engine_modes(ours, theirs)
    return leaf_differences({**ours, **ours_modes}, {**theirs, **theirs_modes},
                            skip=BOOKKEEPING)


def _shared_engine_modes(ours: Header, theirs: Header) -> tuple[JSONObject, JSONObject]:
    """Each search header's ``engine_modes`` cut to the engines both ran (the rest of the
    engine lists is bookkeeping); nothing for a recall dump."""
    engines = (ours.get("engines"), theirs.get("engines"))
    if not (isinstance(engines[0], list) and isinstance(engines[1], list)):
        return {}, {}
    shared = set(engines[0]) & set(engines[1])
    ours_modes, theirs_modes = engine_modes_of(ours), engine_modes_of(theirs)
    return ({"engine_modes": {e: m for e, m in ours_modes.items() if e in shared}},
            {"engine_modes": {e: m for e, m in theirs_modes.items() if e in shared}})


def mode_differences(ours: Header, theirs: Header) -> list[Difference]:
    """The engines both search runs asked that ran in another mode in each (``needle
    compare`` warns of them: comparing two modes of one engine is a fair question, but a
    reader must know the runs differ)."""
    return leaf_differences(*_shared_engine_modes(ours, theirs))


def request_knobs(ours: Mapping[str, object],
                  theirs: Mapping[str, object]) -> dict[str, tuple[object, object]]:
    """Model request keys whose values differ, bookkeeping left out: what ``compare`` calls
    the knobs between two runs."""
    keys = (ours.keys() | theirs.keys()) - REQUEST_BOOKKEEPING
    return {key: (ours.get(key), theirs.get(key)) for key in sorted(keys)
            if ours.get(key) != theirs.get(key)}


def refusal(what: str, differences: list[Difference], labels: tuple[str, str]) -> str:
    """``what`` followed by one indented line per differing leaf."""
    return what + ":\n  " + "\n  ".join(d.describe(labels) for d in differences)


class SetupMismatch(UsageError):
    """``--resume`` found earlier runs, none of this run's setup."""


def resume_source(runs: Iterable[tuple[Path, Header, Run]],
                  ours: Header, labels: tuple[str, str]) -> Run | None:
    """What ``--resume`` continues (recall and search alike): of ``runs`` (newest first, as
    (file, header, what the caller wants back)), the first of ``ours``'s setup; None when
    there is no run at all. When there are runs and none is of this setup,
    ``SetupMismatch`` names how the newest differs: resuming from nothing would quietly
    ask everything again."""
    refused = None
    for path, theirs, run in runs:
        differences = setup_differences(theirs, ours)
        if not differences:
            return run
        refused = refused or refusal(
            f"--resume: {path} was produced by a different setup; refusing to mix",
            differences, labels)
    if refused is not None:
        raise SetupMismatch(refused)
    return None
