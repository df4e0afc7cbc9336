"""Search cases in flight: one lane per engine, all engines at once, judging pipelined.

The limit of a search run is the longest of each engine's searches one at a time and the
judge calls at the judge's concurrency. A serial run adds them up instead (search, judge,
next case), so engines never overlap and the judge idles while searching. The dispatcher,
the recall ``--concurrency`` dispatcher's sibling (both are ``Lookahead``), starts each
engine's next cases (in this process's run order) ahead of pytest: one search in flight per
engine, every engine at once, and each result judged as soon as its search returns (the
judge shares identical pairs in flight, and ``--judge-concurrency`` bounds its calls across
the run). At most ``lookahead`` cases per engine are outstanding, so a kill loses at most
those. ``lookahead`` 1 is the serial run: one case at a time. A case's judge calls wait for
a slot in run order (``call_priority``): pytest records the earliest case next.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Future

from needle_lib.benches.fetch import CaseWork, fetch_judged, fetch_matched
from needle_lib.benches.plan import SearchCase, SearchClients
from needle_lib.benches.registry import bench_named
from needle_lib.kernel.lookahead import Lookahead
from needle_lib.net.slots import call_priority


class SearchDispatcher:
    """``upcoming()`` lists this process's search cases in run order; ``may_send(case)`` is
    False once fail-fast has tripped for the case's engine. ``all_at_once``: start every
    engine's lane with the first case; an xdist worker cannot (it collects every case but
    runs only the engine groups sent to it), so its lanes open at their first case."""

    def __init__(self, clients: SearchClients, upcoming: Callable[[], list[SearchCase]],
                 may_send: Callable[[SearchCase], bool], lookahead: int, *,
                 all_at_once: bool) -> None:
        self._clients = clients
        self._upcoming = upcoming
        self._may_send = may_send
        self._lookahead = lookahead
        self._all_at_once = all_at_once
        self._by_engine: dict[str, list[SearchCase]] | None = None
        self._run_order: dict[str, int] = {}  # case id -> place in this process's run order
        self._lanes: dict[str, Lookahead[SearchCase, CaseWork]] = {}
        self._locks: dict[str, asyncio.Lock] = {}  # touched on the loop's thread only

    def work(self, case: SearchCase) -> CaseWork:
        """``case``'s search and judging, done ahead or now."""
        if self._lookahead <= 1:
            return self._clients.run(self._fetch(case))
        if self._by_engine is None:
            self._by_engine = {}
            for place, upcoming in enumerate(self._upcoming()):
                self._by_engine.setdefault(upcoming.engine, []).append(upcoming)
                self._run_order[upcoming.id] = place
            for engine in self._by_engine if self._all_at_once else ():
                self._open_lane(engine)
        lane = self._lanes.get(case.engine) or self._open_lane(case.engine)
        return lane.result(case)

    def _open_lane(self, engine: str) -> Lookahead[SearchCase, CaseWork]:
        assert self._by_engine is not None
        cases = self._by_engine.get(engine, [])
        lane = self._lanes[engine] = Lookahead(
            cases, self._lookahead, self._start, functools.partial(self._may_send, cases[0]))
        lane.start_ahead()
        return lane

    def _start(self, case: SearchCase) -> Future[CaseWork]:
        return self._clients.loop.submit(self._fetch(case))

    async def _fetch(self, case: SearchCase) -> CaseWork:
        # this job's own context (a task's copy): its judge calls inherit the case's place
        call_priority.set(self._run_order.get(case.id, 0))
        lane = self._locks.setdefault(case.engine, asyncio.Lock())
        if bench_named(case.bench).kind == "judged":
            return await fetch_judged(self._clients, case, lane)
        return await fetch_matched(self._clients, case, lane)
