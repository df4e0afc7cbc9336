"""Which reports are parts of one run split by ``--shard I/N`` over machines.

Each machine starts its part at its own moment and names the file with its own stamp, so
neither the file name nor ``started_at`` ties the parts together. The header does: a part
records ``shard`` (index and count), and parts of one run share the bench and the query
file (its sha256). Parts whose starts lie within ``SAME_RUN`` of the group's first part
and whose indices differ are one run; a second part with an index already taken starts
another run (a re-run of that machine's share the next hour or day).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from needle_lib.continuous.runs import parse_ts

#: Parts of one run start together (a CI matrix starts its jobs at once); runs of a bench
#: are an hour or more apart.
SAME_RUN = timedelta(minutes=30)


@dataclass(frozen=True)
class PartInfo:
    path: Path
    bench: str
    queries: str  # the query file's sha256 (or path, for reports without one)
    index: int
    count: int
    started: str


def part_info(path: Path, header: dict[str, Any]) -> PartInfo | None:
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
                    str(header.get("started_at") or ""))


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
