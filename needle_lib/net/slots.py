"""Call slots: at most N calls in flight to one provider, across every process of a run.

Why: a provider's concurrency limit (``--judge-concurrency``) is the provider's, not a
worker's: with a bound per process, ``-n 14`` sends 14 × 8 calls at a provider that allows 8.
Given a directory shared by the run's processes (the run directory), each slot is a lock file
held with ``flock``; the kernel drops a process's locks when it dies, so a killed worker never
leaks a slot. Within a process an asyncio semaphore queues callers first, so a process alone
on the files never polls; only while other processes hold slots does a caller poll the files
(every few milliseconds, backing off). Without a directory (or without ``fcntl``, on
Windows) the bound is per process.

Waiting calls are served in ``call_priority`` order (lowest first; ties in arrival order),
not first come first served. The search dispatcher sets it to the case's place in pytest's
run order: with look-ahead, hundreds of calls of later cases may be queued, and pytest can
record only the next case, so a slot goes to the calls that case is waiting for. A FIFO
queue made the next case wait behind every case started ahead of it, pytest stalled, every
lane's look-ahead filled, and the judge ran out of work (issue 23).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; the bound stays per process
    fcntl = None  # type: ignore[assignment]

FIRST_POLL_S = 0.002
MAX_POLL_S = 0.05

#: The order in which waiting calls get a slot, lowest first. A context variable, so the
#: tasks a case's job starts (its judge calls, a shared query profile) inherit it.
call_priority: ContextVar[int] = ContextVar("call_priority", default=0)
#: Subtracted from the priority of a call that other calls wait for (a query's profile,
#: which every verdict of the query needs): it goes before every ordinary call, and such
#: calls keep their run order among themselves.
GATING = 1 << 40


class PriorityGate:
    """An asyncio semaphore whose waiters are woken lowest priority first (then in arrival
    order). A released slot is handed straight to the next waiter, so a newcomer cannot
    take it ahead of the queue."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    async def acquire(self, priority: int) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._arrivals), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot, then cancelled before using it
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():  # skip waiters cancelled while queued
                waiter.set_result(None)
                return
        self._free += 1


class CallSlots:
    def __init__(self, size: int, directory: Path | None = None, *, name: str = "calls") -> None:
        if size < 1:
            raise ValueError(f"concurrency must be at least 1, got {size}")
        self.size = size
        self._local = PriorityGate(size)
        self._paths = ([directory / f"{name}.slot{i}" for i in range(size)]
                       if directory is not None and fcntl is not None else [])
        self._fds: list[int] = []
        self._held: set[int] = set()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """One slot for the duration of the block (queued by ``call_priority``)."""
        await self._local.acquire(call_priority.get())
        try:
            if not self._paths:
                yield
                return
            index = await self._claim()
            try:
                yield
            finally:
                fcntl.flock(self._fds[index], fcntl.LOCK_UN)
                self._held.discard(index)
        finally:
            self._local.release()

    async def _claim(self) -> int:
        if not self._fds:
            self._paths[0].parent.mkdir(parents=True, exist_ok=True)
            self._fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o644) for p in self._paths]
        delay = FIRST_POLL_S
        while True:
            # this process holds fewer than `size` (the semaphore): some file is not ours
            for index, fd in enumerate(self._fds):
                if index in self._held:
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                self._held.add(index)
                return index
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_POLL_S)

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)  # releases any lock still held
        self._fds = []
