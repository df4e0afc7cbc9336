"""Bounded look-ahead: a lane's next cases started before pytest reaches them.

pytest runs cases one after another; the work of a case (a recall answer, a search and its
judging) is I/O that can start earlier. A ``Lookahead`` knows the lane's cases in this
process's run order; when a case asks for its result it also starts the next ones, so up to
``limit`` results are outstanding (started, or back and not yet recorded). The bound is what
a kill can lose. The cases themselves stay ordinary pytest cases recorded in run order, so
ids, verdicts and guards (fail-fast) are those of a serial run.

Shared by the recall dispatcher (``recall/dispatch.py``: a (corpus, model) pair is a lane) and the
search dispatcher (``benches/dispatch.py``: an engine is a lane).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, Protocol, TypeVar


class Case(Protocol):
    @property
    def id(self) -> str: ...


C = TypeVar("C", bound=Case)
R = TypeVar("R")


class Lookahead(Generic[C, R]):
    """``upcoming``: the lane's cases this process will run, in order. ``start(case)``
    begins a case's work and returns its future; ``may_start()`` is False once nothing new
    should be sent (fail-fast has tripped: a failing server gets only what is in flight)."""

    def __init__(self, upcoming: list[C], limit: int, start: Callable[[C], Future[R]],
                 may_start: Callable[[], bool]) -> None:
        self._upcoming = upcoming
        self._limit = limit
        self._start_work = start
        self._may_start = may_start
        self._next = 0
        self._started: set[str] = set()
        self._outstanding: dict[str, Future[R]] = {}

    def result(self, case: C) -> R:
        """``case``'s result, waiting for it if still in flight."""
        if case.id not in self._outstanding:
            self._start(case)
        self._top_up()
        return self._outstanding.pop(case.id).result()

    def start_ahead(self) -> None:
        """Start the lane's first cases before any is asked for."""
        self._top_up()

    def _start(self, case: C) -> None:
        self._started.add(case.id)
        self._outstanding[case.id] = self._start_work(case)

    def _top_up(self) -> None:
        while len(self._outstanding) < self._limit and self._next < len(self._upcoming):
            case = self._upcoming[self._next]
            if case.id in self._started:
                self._next += 1
                continue
            if not self._may_start():
                return
            self._next += 1
            self._start(case)
