"""Plumbing shared by the benches' gold generators: row stamping, drop tallies, and
concurrent fetching that leaves nothing in flight when it fails.

Every generator stamps rows the same way (``query_id`` from the text and the UTC hour, the
hour and production time alongside) and counts why candidates yielded no row, so one
summary line can say where a short run lost its rows.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar, Generic, NotRequired, TextIO, TypedDict, TypeVar, cast

from needle_lib.benches.rows import hour_of, query_hash, query_id
from needle_lib.net.sources import SourceClient
from needle_lib.progress import Progress

SAMPLE_CHARS = 300


OriginT = TypeVar("OriginT")
GoldT = TypeVar("GoldT")
T = TypeVar("T")


class RowExtra(TypedDict, total=False):
    """Keys a bench adds to NEEDLE's, written between the origin and the hour stamps: the
    eval's ``--sample`` stratifies on them."""

    topical_domain: str
    length_bucket: str


class QueryRow(TypedDict, Generic[OriginT]):
    """One generated query in NEEDLE's row format; a bench declares its ``query_origin``.

    Keys are written in construction order (``query_row``), which is the order here."""

    query_id: str
    query_hash: str
    query_text: str
    query_source: str
    query_origin: OriginT
    topical_domain: NotRequired[str]
    length_bucket: NotRequired[str]
    hour_ts: str
    query_produced_at: str


class GoldRow(QueryRow[OriginT], Generic[OriginT, GoldT]):
    """A known-item row: the query and, last, what counts as finding it."""

    gold: GoldT


def query_row(text: str, hour: datetime, *, source: str, origin: OriginT,
              extra: RowExtra | None = None, produced_at: str | None = None
              ) -> QueryRow[OriginT]:
    """One row in NEEDLE's row format, keys in its order: identity, origin, ``extra``, the
    hour stamps (``produced_at`` defaults to the hour)."""
    stamp = hour_of(hour).isoformat()
    return {
        "query_id": query_id(text, hour),
        "query_hash": query_hash(text),
        "query_text": text,
        "query_source": source,
        "query_origin": origin,
        **(extra or RowExtra()),
        "hour_ts": stamp,
        "query_produced_at": produced_at if produced_at is not None else stamp,
    }


def gold_row(text: str, hour: datetime, *, source: str, origin: OriginT, gold: GoldT,
             extra: RowExtra | None = None, produced_at: str | None = None
             ) -> GoldRow[OriginT, GoldT]:
    """``query_row`` with ``gold`` after the hour stamps (NEEDLE's known-item rows)."""
    row = query_row(text, hour, source=source, origin=origin, extra=extra,
                    produced_at=produced_at)
    return {**row, "gold": gold}


@dataclass(frozen=True)
class Stamp:
    """When rows were made: ``hour`` goes into every ``query_id``, ``now`` (to the second)
    is when the row was produced."""

    now: datetime

    @property
    def hour(self) -> datetime:
        return hour_of(self.now)

    @property
    def produced_at(self) -> str:
        return self.now.astimezone(UTC).isoformat(timespec="seconds")

    def gold_row(self, text: str, *, source: str, origin: OriginT, gold: GoldT,
                 extra: RowExtra | None = None) -> GoldRow[OriginT, GoldT]:
        return gold_row(text, self.now, source=source, origin=origin, gold=gold, extra=extra,
                        produced_at=self.produced_at)


@dataclass
class Tally:
    """Drop counts by reason (with the first message of each), mirrored on a progress line
    (items done, requests, drops).

    A bench subclasses it with its ``reasons`` (key → label, in summary order), so a typo
    in a reason fails loudly instead of counting under a name no summary shows. Without a
    ``stream`` nothing is drawn (library and test use); the CLI passes stderr.
    """

    reasons: ClassVar[Mapping[str, str]] = {}
    clients: Sequence[SourceClient] = ()
    stream: TextIO | None = None
    drops: Counter[str] = field(default_factory=Counter)
    samples: dict[str, str] = field(default_factory=dict)
    llm_calls: int = 0
    _progress: Progress | None = field(default=None, init=False, repr=False)

    def stage(self, label: str, total: int) -> None:
        self.close()
        if self.stream is not None:
            self._progress = Progress(label, total, stream=self.stream)

    def drop(self, reason: str, n: int = 1, sample: str | None = None) -> None:
        if reason not in self.reasons:
            raise ValueError(f"unknown drop reason {reason!r}")
        self.drops[reason] += n
        if sample and reason not in self.samples:
            self.samples[reason] = sample[:SAMPLE_CHARS]

    @property
    def requests(self) -> int:
        return sum(client.stats.requests for client in self.clients) + self.llm_calls

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.counters.update(requests=self.requests, drops=self.drops.total())
            self._progress.advance()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    def summary(self) -> str:
        counts = " · ".join(f"{label} {self.drops[reason]}"
                            for reason, label in self.reasons.items())
        firsts = "".join(f"\n  first {self.reasons[r]}: {m}" for r, m in self.samples.items())
        return f"dropped: {counts}{firsts}"


async def all_finished(jobs: Iterable[Awaitable[T]]) -> list[T]:
    """Await ``jobs`` concurrently, results in job order; a failure is raised (the first in
    job order) only once every job has finished.

    Why: ``asyncio.gather`` raises at the first failure (a refused token) and leaves the
    other jobs' requests running; the caller then closes the clients under them and
    ``asyncio.run`` cancels what is left. That lost requests mid-flight, and a connection
    attempt cancelled before it first ran was reported as a coroutine never awaited
    (anyio 4.16's ``connect_tcp``; a flaky ``RuntimeWarning``). Waiting costs little: each
    job stops at its own first failure."""
    results = await asyncio.gather(*jobs, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return cast(list[T], results)
