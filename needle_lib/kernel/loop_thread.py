"""One asyncio event loop per process, running on a daemon thread for the whole session.

Search cases are ordinary pytest cases run one after another on the main thread, yet their
requests must overlap (all engines at once, judging while the next search runs). So the
async clients live on a loop that keeps running between cases: the main thread submits a
case's work and waits only for that case's result. A daemon thread, so Ctrl-C never waits
out requests in flight.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "needle-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        """Start ``coroutine`` on the loop; its result (or exception) arrives in the future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for it."""
        return self.submit(coroutine).result()

    def close(self, last: Coroutine[Any, Any, Any] | None = None) -> None:
        """Cancel work still pending (cases started ahead of a run cut short), run ``last``
        (closing the clients), then stop the loop."""
        if self.loop.is_closed():
            return
        self.run(self._shutdown(last))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

    @staticmethod
    async def _shutdown(last: Coroutine[Any, Any, Any] | None) -> None:
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if last is not None:
            await last
