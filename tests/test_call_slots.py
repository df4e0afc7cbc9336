"""Call slots: one bound on calls in flight across processes, never leaked by a dead one."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from needle_lib.net.slots import CallSlots, call_priority

HOLDER = """
import asyncio, sys
from pathlib import Path
from needle_lib.net.slots import CallSlots

async def main():
    slots = CallSlots(int(sys.argv[2]), Path(sys.argv[1]), name="judge")
    holds = [slots.hold() for _ in range(slots.size)]
    for hold in holds:
        await hold.__aenter__()
    print("held", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


async def _turns(count: int = 20) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_two_holders_of_one_directory_share_the_bound(tmp_path):
    first = CallSlots(2, tmp_path, name="judge")
    other = CallSlots(2, tmp_path, name="judge")  # its own descriptors, like another process
    a, b = first.hold(), first.hold()
    await a.__aenter__()
    await b.__aenter__()

    async def wait_for_slot() -> None:
        async with other.hold():
            pass

    waiter = asyncio.create_task(wait_for_slot())
    await _turns()
    assert not waiter.done()  # both slots are taken by the other holder
    await a.__aexit__(None, None, None)
    await asyncio.wait_for(waiter, timeout=60)
    await b.__aexit__(None, None, None)
    first.close()
    other.close()


async def test_without_a_directory_the_bound_is_per_process():
    slots = CallSlots(2)
    inside, most = 0, 0

    async def call() -> None:
        nonlocal inside, most
        async with slots.hold():
            inside += 1
            most = max(most, inside)
            await _turns(3)
            inside -= 1

    await asyncio.gather(*(call() for _ in range(6)))
    assert most == 2


async def test_a_killed_holder_leaks_no_slot(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), "2"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        slots = CallSlots(2, tmp_path, name="judge")
        waiter = asyncio.create_task(_hold_once(slots))
        await _turns()
        assert not waiter.done()  # every slot is held by the live process
        holder.kill()
        holder.wait()
        await asyncio.wait_for(waiter, timeout=60)  # the kernel released its locks
        slots.close()
    finally:
        holder.kill()
        holder.wait()


async def _hold_once(slots: CallSlots) -> None:
    async with slots.hold():
        pass


async def test_waiting_calls_get_a_slot_lowest_priority_first(tmp_path):
    """The case pytest records next (the lowest place in run order) is served first, not
    the call that queued first; equal priorities keep their arrival order."""
    slots = CallSlots(1, tmp_path, name="judge")
    served: list[str] = []

    async def call(name: str, priority: int) -> None:
        call_priority.set(priority)  # this task's own context, as the dispatcher sets it
        async with slots.hold():
            served.append(name)

    first = slots.hold()
    await first.__aenter__()
    waiters = [asyncio.create_task(call(name, priority)) for name, priority in
               (("late case", 9), ("next case", 1), ("middle case", 4), ("next case too", 1))]
    await _turns()
    assert served == []  # all queued behind the held slot
    await first.__aexit__(None, None, None)
    await asyncio.gather(*waiters)
    assert served == ["next case", "next case too", "middle case", "late case"]
    slots.close()


async def test_a_cancelled_waiter_leaks_no_slot():
    slots = CallSlots(1)
    first = slots.hold()
    await first.__aenter__()
    cancelled = asyncio.create_task(_hold_once(slots))
    later = asyncio.create_task(_hold_once(slots))
    await _turns()
    cancelled.cancel()
    await first.__aexit__(None, None, None)
    await asyncio.wait_for(later, timeout=60)  # the slot went past the cancelled waiter
    await asyncio.wait_for(_hold_once(slots), timeout=60)  # and came back afterwards
