"""A pytest plugin for ``benchmarks/recall_vs_seed.py``: when each phase of a run began.

Loaded with ``-p phases`` (``benchmarks/`` on ``PYTHONPATH``); writes wall-clock stamps
(``time.time()``, comparable with the parent's stamp taken just before it started the
process) to the JSON file named by ``NEEDLE_PHASES_OUT`` when the interpreter exits.
Entry-point plugins load before this one, so "plugins loaded" includes them.
"""

from __future__ import annotations

import atexit
import json
import os
import time

import pytest

STAMPS: dict[str, float] = {"plugins loaded": time.time()}


def pytest_configure(config: pytest.Config) -> None:
    STAMPS.setdefault("configured", time.time())


def pytest_collection(session: pytest.Session) -> None:
    STAMPS.setdefault("collection starts", time.time())


def pytest_runtestloop(session: pytest.Session) -> None:
    STAMPS.setdefault("first case starts", time.time())


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    STAMPS.setdefault("last case done", time.time())


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    STAMPS.setdefault("reports written", time.time())


@atexit.register
def _write() -> None:
    path = os.environ.get("NEEDLE_PHASES_OUT")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(STAMPS, fh)
