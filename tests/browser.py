"""Headless Chromium for checking generated HTML pages (reports, dashboards)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
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


_MEASURE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="page" src="{src}" style="border:0;width:{width}px;height:{height}px"></iframe>
<pre id="needle-measure"></pre>
<script>
document.getElementById("page").addEventListener("load", () => {{
  const doc = document.getElementById("page").contentDocument;
  const el = doc && doc.getElementById("{element}");
  const box = el && el.getBoundingClientRect();
  document.getElementById("needle-measure").textContent = JSON.stringify(el ? {{
    top: box.top, bottom: box.bottom, visible: el.checkVisibility(),
    viewport: doc.defaultView.innerHeight, text: el.innerText}} : {{missing: true}});
}});
</script></body></html>
"""


def first_screen(page: Path, element: str, tmp: Path, *, width: int = 1280,
                 height: int = 900) -> dict:
    """Where element ``#element`` of ``page`` lies when the page opens in a ``width`` ×
    ``height`` window, after its scripts ran: ``top``, ``bottom`` (pixels from the top of
    the window), ``visible``, ``viewport`` (the window's height) and its ``text``."""
    harness = page.with_name(f"{page.stem}.measure.html")
    harness.write_text(_MEASURE.format(src=page.name, width=width, height=height,
                                       element=element), encoding="utf-8")
    dom = run_chromium(harness, tmp / "chromium-measure", "--allow-file-access-from-files",
                       f"--window-size={width + 20},{height + 100}",
                       "--virtual-time-budget=5000", "--dump-dom")
    found = re.search(r'<pre id="needle-measure">(.*?)</pre>', dom, re.S)
    assert found and found[1], f"chromium measured nothing on {page}: {dom[:500]}"
    return json.loads(unescape(found[1]))
