"""Call slots: at most N calls in flight to one provider, across every process of a run.

Why: a provider's concurrency limit (``--judge-concurrency``) is the provider's, not a
worker's: with a bound per process, ``-n 14`` sends 14 × 8 calls at a provider that allows 8.
Given a directory shared by the run's processes (the run directory), each slot is a lock file
held with ``flock``; the kernel drops a process's locks when it dies, so a killed worker never
leaks a slot. Within a process an asyncio semaphore queues callers first, so a process alone
on the files never polls; only while other processes hold slots does a caller poll the files
(every few milliseconds, backing off). Without a directory (or without ``fcntl``, on
Windows) the bound is per process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; the bound stays per process
    fcntl = None  # type: ignore[assignment]

FIRST_POLL_S = 0.002
MAX_POLL_S = 0.05


class CallSlots:
    def __init__(self, size: int, directory: Path | None = None, *, name: str = "calls") -> None:
        if size < 1:
            raise ValueError(f"concurrency must be at least 1, got {size}")
        self.size = size
        self._local = asyncio.Semaphore(size)
        self._paths = ([directory / f"{name}.slot{i}" for i in range(size)]
                       if directory is not None and fcntl is not None else [])
        self._fds: list[int] = []
        self._held: set[int] = set()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """One slot for the duration of the block."""
        async with self._local:
            if not self._paths:
                yield
                return
            index = await self._claim()
            try:
                yield
            finally:
                fcntl.flock(self._fds[index], fcntl.LOCK_UN)
                self._held.discard(index)

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
