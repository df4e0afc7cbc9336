"""``needle merge``'s checks, once for both families: parts of one run split over machines.

Whatever the family, parts are refused when they are not parts of one run: a different
setup (every differing leaf named: a number mixing two setups describes neither), shards of
different ``--shard`` splits or one shard given twice, and a case present in two parts
(which copy counts?). Shards no part stands for, and cases a shard was given but did not
record (a killed or fail-fast machine), are named as missing. Only then does the family
fold the parts into one result (``MergeFamily.fold``): recall parts are unions of
independent cases, while a search report's pooled figures must be recomputed over every
engine's cases.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from needle_lib.contract.setup import refusal, setup_differences
from needle_lib.errors import UsageError

CaseT = TypeVar("CaseT")


class MergeError(UsageError, ValueError):
    """Parts that cannot make one result; the message names the files and the difference."""


@dataclass(frozen=True)
class Part:
    """One file to merge: a recall dump, or a search run as ``{"header", "cases"}``."""

    path: Path
    # the decoded file, whose shape the family decides (its reader validated it)
    dump: dict[str, Any]


@dataclass
class Merged:
    # the merged file as it is written: a recall dump or a search report
    dump: dict[str, Any]
    #: What is missing from the merge, one line each; empty when the parts cover the run.
    missing: list[str] = field(default_factory=list)
    #: One line saying what the merged dump holds (cases of expected).
    summary: str = ""
    #: The command that completes an incomplete merge, if there is one.
    resume_hint: str | None = None


class MergeFamily(Protocol[CaseT]):
    """What ``merge`` asks of a family: its parts' setups, shards and cases (``CaseT``, the
    family's case record), and the fold."""

    def header(self, part: Part) -> Mapping[str, Any]:
        """The part's setup (validated, migrated if older); MergeError when it is not one."""
        ...

    def shard(self, part: Part) -> Mapping[str, Any] | None:
        """The part's ``--shard`` (``index``, ``count``, ``by``, and the ``case_ids`` it
        was given where the family records them), or None for a whole run."""
        ...

    def cases(self, part: Part) -> Sequence[CaseT]:
        ...

    def key(self, case: CaseT) -> Hashable:
        """A case's identity within the run."""
        ...

    def describe(self, key: Any) -> str:
        """``key`` in words, for a message."""
        ...

    def fold(self, parts: list[Part], headers: list[Mapping[str, Any]],
             missing: list[str]) -> Merged:
        """The merged result of checked parts; ``missing`` so far, for it to extend."""
        ...


def merge(parts: list[Part], family: MergeFamily[CaseT]) -> Merged:
    """One result from ``parts`` of one run; MergeError when they cannot be."""
    headers = [family.header(part) for part in parts]
    check_setups(parts, headers)
    missing = check_shards(parts, family)
    check_duplicates(parts, family)
    return family.fold(parts, headers, missing)


def check_setups(parts: list[Part], headers: list[Mapping[str, Any]]) -> None:
    """Refuse parts whose headers differ in setup, naming every differing leaf."""
    first, first_header = parts[0], headers[0]
    for part, header in zip(parts[1:], headers[1:], strict=True):
        diffs = setup_differences(first_header, header)
        if diffs:
            raise MergeError(refusal(f"{part.path} comes from a different setup than "
                                     f"{first.path}; refusing to mix", diffs,
                                     (first.path.name, part.path.name)))


def check_shards(parts: list[Part], family: MergeFamily[CaseT]) -> list[str]:
    """Refuse parts of different splits or a shard given twice; name missing shards and
    cases a shard was given but did not record."""
    shards = [(part, shard) for part in parts if (shard := family.shard(part))]
    if not shards:
        return []
    splits = {(s["count"], s["by"]) for _, s in shards}
    if len(splits) > 1:
        raise MergeError("parts come from different --shard splits: " + ", ".join(
            f"{p.path.name} is {s['index']}/{s['count']} by {s['by']}" for p, s in shards))
    count = shards[0][1]["count"]
    seen: dict[int, Path] = {}
    missing = []
    for part, shard in shards:
        if shard["index"] in seen:
            raise MergeError(f"shard {shard['index']}/{count} given twice: "
                             f"{seen[shard['index']]} and {part.path}")
        seen[shard["index"]] = part.path
        recorded = {family.key(case) for case in family.cases(part)}
        lost = [case_id for case_id in shard.get("case_ids", ()) if case_id not in recorded]
        if lost:
            missing.append(f"{part.path.name} (shard {shard['index']}/{count}) lacks "
                           f"{len(lost)} of its cases: {', '.join(lost)}")
    missing += [f"shard {index}/{count}: no part given"
                for index in range(1, count + 1) if index not in seen]
    return missing


def check_duplicates(parts: list[Part], family: MergeFamily[CaseT]) -> None:
    """Refuse a case present in more than one part, naming each with its parts."""
    owner: dict[Hashable, list[str]] = {}
    for part in parts:
        for case in family.cases(part):
            owner.setdefault(family.key(case), []).append(part.path.name)
    twice = [(key, names) for key, names in owner.items() if len(names) > 1]
    if twice:
        raise MergeError(f"{len(twice)} case(s) appear in more than one part (overlapping "
                         "parts?): " + "; ".join(
                             f"case {family.describe(key)} is in "
                             f"{'both ' if len(names) == 2 else ''}"
                             f"{', '.join(names[:-1])} and {names[-1]}"
                             for key, names in sorted(twice, key=lambda t: str(t[0]))))
