"""Judge calls counted per search case, however many cases are in flight at once.

A case's ``judge_requests`` is the number of LLM calls its judging made. With cases
pipelined on one event loop, a judge's global counter moves for every case at once, so
each case's work runs inside ``counting()`` and every call notes itself in the tally of the
task that made it. A call shared by several cases (in flight or cached) is counted once,
for the case that made it; tasks a call spawns inherit the tally of their creator.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Tally:
    requests: int = 0


_current: ContextVar[Tally | None] = ContextVar("needle_judge_tally", default=None)


@contextmanager
def counting() -> Iterator[Tally]:
    """Count the judge calls made in this block (this task and the tasks it starts)."""
    tally = Tally()
    token = _current.set(tally)
    try:
        yield tally
    finally:
        _current.reset(token)


def note_request() -> None:
    tally = _current.get()
    if tally is not None:
        tally.requests += 1
