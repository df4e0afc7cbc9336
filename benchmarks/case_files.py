"""A pytest plugin for ``benchmarks/case_path.py``: which ``needle_lib`` files the code of
the run's first case passes through (its setup, call and teardown, and every plugin's
handling of its reports, the controller's included), the loop and request threads too.

Loaded with ``-p case_files`` (``benchmarks/`` on ``PYTHONPATH``); writes the sorted paths,
relative to ``NEEDLE_CASE_FILES_ROOT``, to the JSON file named by ``NEEDLE_CASE_FILES_OUT``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Generator
from types import FrameType

import pytest

ROOT = os.environ.get("NEEDLE_CASE_FILES_ROOT", "")
SEEN: set[str] = set()


def _profile(frame: FrameType, event: str, arg: object) -> None:
    if event == "call" and frame.f_code.co_filename.startswith(ROOT):
        SEEN.add(os.path.relpath(frame.f_code.co_filename, ROOT))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    first = not SEEN
    if first:
        sys.setprofile(_profile)
        threading.setprofile(_profile)
    try:
        return (yield)
    finally:
        if first:
            sys.setprofile(None)
            threading.setprofile(None)
            with open(os.environ["NEEDLE_CASE_FILES_OUT"], "w", encoding="utf-8") as fh:
                json.dump(sorted(SEEN), fh)
