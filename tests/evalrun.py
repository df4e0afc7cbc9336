"""Run ``pytest evals`` for real (a subprocess through pytester) and read what it wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from needle_lib.paths import REPO_ROOT

EVALS = REPO_ROOT / "evals"


def run_evals(pytester: pytest.Pytester, results: Path, *args: str,
              module: str = "test_recall.py") -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        str(EVALS / module) if module else str(EVALS),
        f"--rootdir={REPO_ROOT}",
        "--results-dir", str(results),
        "--no-color",
        "-p", "no:cacheprovider",
        *args,
    )


def load_dump(results: Path, name: str) -> dict[str, Any]:
    return json.loads((results / f"{name}.json").read_text(encoding="utf-8"))
