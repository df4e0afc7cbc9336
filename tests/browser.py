"""Headless Chromium for checking generated HTML pages (reports, dashboards)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
)


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium); "
                    "the browser check cannot run here")
    return path


def screenshot(page: Path, out: Path, tmp: Path, *, size: str = "1280,900") -> Path:
    """Render ``page`` (a local file) headless and save a PNG screenshot."""
    result = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}",
         f"--window-size={size}", f"--screenshot={out}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert out.is_file(), f"chromium wrote no screenshot: {result.stderr[-2000:]}"
    return out


def dom_text(page: Path, tmp: Path) -> str:
    """The page's DOM after scripts ran (``--dump-dom``)."""
    result = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chromium-dom'}",
         "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout
