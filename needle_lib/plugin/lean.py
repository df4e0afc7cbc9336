"""An eval run's process spends its time on the run. The plugin is loaded only for eval
runs (``evals/conftest.py``), so all of this applies to every run that loads it; test-only
plugins (pytest-asyncio, Hypothesis) are not even imported, as ``addopts`` blocks them and
only ``tests/conftest.py`` loads them.

- Garbage-collection passes over what lives until exit. After collection, the modules, the
  plan and the collected cases stay alive to the end, yet pytest's unconfigure and cleanup
  each run a full collection over them, and every automatic pass during the run walks them
  again (0.2–0.3 s of a 2 s run). They are frozen (``gc.freeze``) once collected, and
  unfrozen as the very last cleanup, so an in-process session (pytester) hands its host a
  normal collector back.
- Waiting for git. Every dump records the checkout's revision, and the two git processes
  that find it (tens of milliseconds, more on a busy machine) run in the background from
  configure on, overlapping the collection instead of delaying the first case.
- The interpreter's exit. Tearing the modules down runs full collections over everything
  still alive (0.2 s of CPU, a tenth of a 16-case run's wall time), only to free memory the
  OS takes back anyway. At exit (an exit handler: non-daemon threads are joined by then),
  the garbage made since the last automatic pass is collected, so its finalizers run as
  usual, and the rest is frozen. Nothing is skipped that exit would otherwise do
  for a live object: a dying interpreter does not promise finalizers for objects alive at
  exit, and every output of a run is written and closed before pytest returns.
"""

from __future__ import annotations

import atexit
import gc

import pytest

from needle_lib.provenance import look_up_git_revision_early

frozen_key = pytest.StashKey[bool]()


def configure_lean_run(config: pytest.Config) -> None:
    """At configure, before any other plugin's configure: start the git lookup, and
    schedule the unfreeze as the last cleanup (cleanups run last-registered first)."""
    look_up_git_revision_early()
    config.stash[frozen_key] = True
    config.add_cleanup(gc.unfreeze)
    # Each in-process session registers it again: it stays one handler.
    atexit.unregister(freeze_at_exit)
    atexit.register(freeze_at_exit)


def freeze_collected(config: pytest.Config) -> None:
    """Once collected, exempt everything alive from garbage collection until the end."""
    if config.stash.get(frozen_key, False):
        gc.freeze()


def freeze_at_exit() -> None:
    """Spare the interpreter's teardown its collections over what lives until the end."""
    gc.collect(1)
    gc.freeze()
