"""A pytest plugin for ``benchmarks/case_files.py``: which Needle source files run.

Loaded with ``-p case_probe`` (``benchmarks/`` on ``PYTHONPATH``) before Needle's plugin
starts any thread, it installs a profile function in this thread and every later one, and
notes the file of each Python function called while recording. Recording starts when
collection finishes and stops when the session has finished (dumps, reports and summary
written), so a run of one selected case measures the files that case passes through. The
set goes to the file ``NEEDLE_CASE_PROBE_OUT`` names, one path per line.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

PACKAGE = str(Path(__file__).resolve().parent.parent / "needle_lib") + os.sep
_seen: set[str] = set()
_recording = False


def _profile(frame: FrameType, event: str, arg: Any) -> None:
    if _recording and event == "call":
        name = frame.f_code.co_filename
        if name.startswith(PACKAGE) and name.endswith(".py"):  # not Jinja templates
            _seen.add(name)


sys.setprofile(_profile)
threading.setprofile(_profile)


def pytest_collection_finish(session: pytest.Session) -> None:
    global _recording
    _recording = True


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    global _recording
    try:
        yield
    finally:
        _recording = False
        out = os.environ.get("NEEDLE_CASE_PROBE_OUT")
        if out:
            Path(out).write_text("".join(f"{n}\n" for n in sorted(_seen)))
