"""Run state shared by the workers of one run: a claimant's death never stalls the others."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from needle_lib.kernel.runstate import RunState

#: A worker that claims the preflight and is SIGKILLed while running it.
KILLED_CLAIMANT = """
import os, signal, sys
from pathlib import Path
from needle_lib.kernel.runstate import RunState
RunState(Path(sys.argv[1])).preflight("c__m", lambda: os.kill(os.getpid(), signal.SIGKILL))
"""


def _verdict(directory: Path, verdict: str) -> list[str | None]:
    """``preflight("c__m")`` in a thread, so a hang fails the test instead of stalling it."""
    verdicts: list[str | None] = []

    def wait_for_verdict() -> None:
        state = RunState(directory)  # SQLite connections stay in their thread
        verdicts.append(state.preflight("c__m", lambda: verdict))
        state.close()

    waiter = threading.Thread(target=wait_for_verdict, daemon=True)
    waiter.start()
    waiter.join(timeout=60)  # bounds only a hang; a healthy takeover is immediate
    return verdicts


def test_a_claim_left_by_a_killed_worker_is_taken_over(tmp_path):
    killed = subprocess.run([sys.executable, "-c", KILLED_CLAIMANT, str(tmp_path)], check=False)
    assert killed.returncode == -9  # it died holding the claim
    assert _verdict(tmp_path, "ran here") == ["ran here"]


def test_a_claim_this_process_left_unfinished_is_run_again(tmp_path):
    """A preflight whose verdict could not be written (its run directory was deleted under
    it) leaves this process's own claim: the next case runs it again instead of waiting for
    itself forever."""
    state = RunState(tmp_path)
    state._db.execute("INSERT INTO preflight VALUES ('c__m', 0, NULL, ?)", (os.getpid(),))
    state.close()
    assert _verdict(tmp_path, "ran again") == ["ran again"]


def test_a_live_claimants_verdict_is_shared(tmp_path):
    first, second = RunState(tmp_path), RunState(tmp_path)
    assert first.preflight("c__m", lambda: "too long") == "too long"
    assert second.preflight("c__m", lambda: "never run") == "too long"
    first.close()
    second.close()


def test_the_run_state_never_waits_for_the_disk(tmp_path):
    """It lives as long as the run, so its writes are not fsynced; workers still share it."""
    first, second = RunState(tmp_path), RunState(tmp_path)
    assert first._db.execute("PRAGMA synchronous").fetchone()[0] == 0
    first.note_error("m", "refused")
    assert second.consecutive_errors("m") == (1, "refused")
    first.close()
    second.close()
