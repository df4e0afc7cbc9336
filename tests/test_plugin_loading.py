"""Needle's plugin is loaded for eval runs only, and the test-only plugins for tests only.

``evals/conftest.py`` loads ``needle_lib.plugin`` (pytest loads a conftest in a path the
command line names before it parses the options, so ``--model`` is known); the root
``conftest.py`` loads nothing. pytest-asyncio and Hypothesis are blocked in ``addopts``
and loaded by ``tests/conftest.py``. No code looks at the command line to tell the two
kinds of run apart: which conftest pytest loads decides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from needle_lib.paths import REPO_ROOT

NEEDLE = "needle_lib.plugin"
TEST_ONLY = ["pytest_asyncio.plugin", "_hypothesis_pytestplugin"]

#: Records, per process (the controller and each xdist worker), which plugins it loaded.
PROBE = """\
import json, os, sys

NAMES = ("needle_lib.plugin", "pytest_asyncio.plugin", "_hypothesis_pytestplugin",
         "asyncio", "hypothesispytest")

def pytest_configure(config):
    loaded = [n for n in NAMES if config.pluginmanager.has_plugin(n)]
    role = "worker" if hasattr(config, "workerinput") else "controller"
    with open(os.environ["PROBE_OUT"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"role": role, "loaded": loaded,
                             "modules": [m for m in ("asyncio", "hypothesis")
                                         if m in sys.modules]}) + "\\n")
"""


def test_a_unit_test_run_has_no_needle_plugin(pytestconfig: pytest.Config) -> None:
    """This very run (``pytest`` / ``pytest tests/…``): the test-only plugins, not Needle's."""
    assert not pytestconfig.pluginmanager.has_plugin(NEEDLE)
    assert all(pytestconfig.pluginmanager.has_plugin(name) for name in TEST_ONLY)
    # the asyncio_* ini keys are pytest-asyncio's own here (auto mode runs async tests)
    assert pytestconfig.getini("asyncio_mode") == "auto"


def _probe(tmp_path: Path, words: list[str], cwd: Path = REPO_ROOT) -> list[dict]:
    (tmp_path / "plugins_probe.py").write_text(PROBE)
    out = tmp_path / "probe.jsonl"
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *words, "-p", "plugins_probe", "-p", "no:cacheprovider",
         "-q", "--color=no", "-W", "error::pytest.PytestConfigWarning"],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PROBE_OUT": str(out)},
    )
    # the ini file's asyncio_* keys stay known when pytest-asyncio is not loaded
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


EVALS = str(REPO_ROOT / "evals")


@pytest.mark.parametrize(
    ("words", "cwd"),
    [
        (["evals", "-k", "jquery", "--collect-only"], REPO_ROOT),
        (["evals/test_recall.py::test_recall", "--model", "reference", "--collect-only"],
         REPO_ROOT),
        # a value naming a path outside evals/ changes nothing (it chose the ini file before)
        (["evals", "--model", "configs/models/qwen36-35b.toml", "--collect-only"], REPO_ROOT),
        # as tests run it: an absolute path, --rootdir, another working directory
        ([EVALS, f"--rootdir={REPO_ROOT}", "-k", "jquery", "--collect-only"], None),
        (["-k", "jquery", "--collect-only"], REPO_ROOT / "evals"),
    ],
    ids=["evals", "module", "option-value", "rootdir", "cd-evals"],
)
def test_an_eval_run_loads_the_plugin_and_no_test_only_plugin(
    tmp_path: Path, words: list[str], cwd: Path | None
) -> None:
    (record,) = _probe(tmp_path, words, cwd or tmp_path)
    assert record["loaded"] == [NEEDLE]
    assert record["modules"] == []  # neither asyncio nor Hypothesis is even imported


def test_every_process_of_an_xdist_eval_run_loads_the_plugin(tmp_path: Path) -> None:
    records = _probe(tmp_path, ["evals", "--corpus", "http_server", "--sample", "2", "-n", "2",
                                "--results-dir", str(tmp_path / "results")])
    assert sorted(r["role"] for r in records) == ["controller", "worker", "worker"]
    assert all(r["loaded"] == [NEEDLE] and r["modules"] == [] for r in records)


@pytest.mark.parametrize(
    ("words", "loaded"),
    [
        (["tests/test_runstate.py"], TEST_ONLY),
        # both kinds at once: each conftest loads its own
        (["evals", "tests/test_runstate.py"], [NEEDLE, *TEST_ONLY]),
    ],
    ids=["tests", "both"],
)
def test_a_run_of_tests_loads_the_test_only_plugins(
    tmp_path: Path, words: list[str], loaded: list[str]
) -> None:
    (record,) = _probe(tmp_path, [*words, "--collect-only"])
    assert record["loaded"] == loaded


def test_a_bare_pytest_run_loads_no_needle_plugin(tmp_path: Path) -> None:
    """``pytest`` with no path runs ``testpaths`` (tests/); the probe stops it once
    configured, before it collects two thousand tests."""
    (tmp_path / "stop_probe.py").write_text(
        "import pytest\n\ndef pytest_sessionstart(session):\n"
        "    pytest.exit('probed', returncode=0)\n")
    (record,) = _probe(tmp_path, ["-p", "stop_probe"])
    assert record["loaded"] == TEST_ONLY


@pytest.mark.parametrize("cwd", [REPO_ROOT, REPO_ROOT / "evals"], ids=["root", "cd-evals"])
def test_case_ids_keep_their_shape_wherever_the_run_starts(cwd: Path) -> None:
    """The rootdir stays the repository's (its ``pyproject.toml``), so node ids, ``-k`` and
    ``--lf`` see the same names from the root and from ``evals/``."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *(["evals"] if cwd == REPO_ROOT else []),
         "-k", "jquery and qwen36", "--model", "qwen36-35b", "--collect-only", "-q",
         "-p", "no:cacheprovider"],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith("evals/test_recall.py::test_recall[jquery-") for i in ids)
    assert all(i.endswith("-qwen36-35b]") for i in ids)
