"""What a long eval run's process spends, and how little of it goes to bookkeeping.

An eval run's process spends its time on the run. The plugin is loaded only for eval runs
(``evals/conftest.py``), so all of this applies to every run that loads it; test-only
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
- Records of settled cases (``CaseRetention``). A case's record rides on its item and on
  its setup, call and teardown reports, and pytest's terminal reporter and pytest-html
  keep every report to the end of the run: a 20,000-case search run held 20,000 records
  (results, snippets, judge reasoning, a header each) until it exited. Once every plugin
  has seen a case's teardown report the record has done its work (the controller journaled
  it, pytest-html and junitxml took what they show), so it is dropped from the item and
  the reports, and pytest-html's and the terminal reporter's own copies are let go
  (``plugin.internals``).
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Generator

import pytest

from needle_lib.plugin.internals import html_case_tables, unlist_quiet
from needle_lib.plugin.scorecard import RECORD_KEY, record_of
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


def without_record(properties: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """A new list, so a plugin that kept the old one (pytest-json-report) keeps its view."""
    return [entry for entry in properties if entry[0] != RECORD_KEY]


class CaseRetention:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        #: a case's reports seen so far, until its teardown report (xdist ships each report
        #: on its own, so they do not share the item's list of properties)
        self._reports: dict[str, list[pytest.TestReport]] = {}
        self._html_tables: list[dict[str, object]] | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        result = yield  # every plugin has seen the report
        if record_of(report) is None:
            return result
        unlist_quiet(self._config, report)
        self._reports.setdefault(report.nodeid, []).append(report)
        if report.when == "teardown":
            for settled in self._reports.pop(report.nodeid):
                settled.user_properties = without_record(settled.user_properties)
            if self._html_tables is None:
                self._html_tables = html_case_tables(self._config)
            for table in self._html_tables:
                table.pop(report.nodeid, None)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        result = yield  # the case's reports are logged
        item.user_properties = without_record(item.user_properties)
        return result
