"""Run ``pytest evals`` for real (a subprocess through pytester) and read what it wrote."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from needle_lib.paths import REPO_ROOT
from needle_lib.recall.journal import read_dump
from needle_lib.testing.openai_server import FakeOpenAIServer

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


def assert_usage_error(result: pytest.RunResult, *lines: str) -> None:
    """pytest's usage error: exit 4, ``ERROR: …`` on stderr, and no traceback frames."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: {lines[0]}", *lines[1:]])
    output = result.stdout.str() + result.stderr.str()
    # no frame of pluggy's (its name alone is in pytest's session header, which a refusal
    # made once collection shows what runs follows)
    assert "Traceback" not in output and not re.search(r"pluggy[/\\]", output)
    assert not re.search(r"\.py:\d+: in ", output), output


def load_dump(results: Path, name: str) -> dict[str, Any]:
    return json.loads((results / f"{name}.json").read_text(encoding="utf-8"))


def record_run(results: Path, behaviour: str | None, model: str, corpora: list[str],
               *extra: str) -> str:
    """Run ``pytest evals`` for real: the built-in reference model, or a loopback fake server.
    Returns what the run printed."""
    server = FakeOpenAIServer(behaviour) if behaviour else nullcontext()
    with server:
        url = ["--base-url", server.url] if behaviour else []
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(REPO_ROOT / "evals"), f"--rootdir={REPO_ROOT}",
             "-p", "no:cacheprovider", "-q", "--no-color", "--results-dir", str(results),
             "--model", model, *url, *(f"--corpus={c}" for c in corpora), *extra],
            cwd=REPO_ROOT, capture_output=True, check=False, timeout=600,
        )
    for corpus in corpora:
        assert (results / f"{corpus}__{model}.json").exists(), f"no dump for {corpus}/{model}"
    return done.stdout.decode("utf-8", "replace")


def record_runs(results: Path, specs: list[tuple]) -> None:
    with ThreadPoolExecutor(len(specs)) as pool:
        for future in [pool.submit(record_run, results, *spec) for spec in specs]:
            future.result()


def wait_for_cases(path: Path, count: int, timeout: float = 600.0) -> dict[str, Any]:
    """The dump at ``path`` once it holds ``count`` cases (read as every reader does: a run
    in flight journals each case beside its dump, ``recall.journal.read_dump``); the
    generous deadline only bounds a broken run, it never paces a good one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            dump = read_dump(path)
        except (OSError, ValueError):  # not yet written (a SchemaError is a ValueError)
            dump = None
        if dump and len(dump["cases"]) >= count:
            return dump
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {count} cases")


def case_labels(queries: Path) -> dict[str, str]:
    """query_id → the query's piece of each case id, as the plugin names cases from the file."""
    from needle_lib.benches.queries import load_queries
    from needle_lib.names import unique_query_labels

    return unique_query_labels((q.query_id, q.query) for q in load_queries(queries))
