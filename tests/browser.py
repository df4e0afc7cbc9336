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


def run_chromium(page: Path, profile: Path, *args: str, fragment: str = "") -> str:
    """Load a local page headless with its own profile (so browsers can run in parallel);
    returns stdout (the DOM with ``--dump-dom``). ``fragment`` is appended as ``#…``."""
    uri = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    result = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, uri],
        capture_output=True, text=True, timeout=600, check=False,
    )
    return result.stdout


def screenshot(page: Path, out: Path, tmp: Path, *, size: str = "1280,900") -> Path:
    """Render ``page`` and save a PNG screenshot."""
    run_chromium(page, tmp / "chromium-shot", f"--window-size={size}", f"--screenshot={out}")
    assert out.is_file(), f"chromium wrote no screenshot of {page}"
    return out


def dom_text(page: Path, tmp: Path) -> str:
    """The page's DOM after scripts ran."""
    dom = run_chromium(page, tmp / "chromium-dom", "--virtual-time-budget=5000", "--dump-dom")
    assert dom, f"chromium returned no DOM for {page}"
    return dom
