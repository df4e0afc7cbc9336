"""Shared test setup: pytester for end-to-end runs of ``pytest evals``, and a pinned clock.

Generation seeds from the UTC hour and dates its windows from today, so a test that ran a
generate command on the real clock drew a different sample every hour (and failed in some).
Every test runs as of ``PINNED_NOW`` (``NEEDLE_NOW``, inherited by subprocesses); a test
about another moment sets its own. ``.ci/run`` runs the clock-sensitive tests under
libfaketime at several hours and dates to keep it so.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from fakeclock import PINNED_NOW

from needle_lib.clock import NOW_ENV

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> datetime:
    monkeypatch.setenv(NOW_ENV, PINNED_NOW.isoformat())
    return PINNED_NOW
