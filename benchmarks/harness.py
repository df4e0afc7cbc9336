"""Speed of the recall harness itself, measured against loopback servers (not a test).

Prints four figures, each measured in this run:
  1. harness overhead per case against a zero-latency server
     (case wall time from pytest's junit timings minus the request latency the client saw);
  2. ``pytest evals --collect-only`` over every shipped corpus, cold (empty parse cache) and
     warm, as pytest reports it and as process wall time;
  3. 16 cases against a server with 1 s latency and 4 slots: serial, ``-n 4`` (four
     processes) and ``--concurrency 4`` (one process), as ratios to the ideal 16 × 1 s /
     4 slots + 1 s for the preflight. The span is measured at the server, from the
     preflight's arrival to the last answer; process wall time adds start-up and collection;
  4. search runs stay linear: per-case time at 200 and 20,000 search cases
     (``benchmarks/search_scale.py``; ``--quick`` measures 200 and 2,000).

Targets: (1) < 5 ms a case; (2) warm < 1.5 s; (3) ``-n 4`` span within 1.3× of the ideal,
``--concurrency 4`` span within 1.15× and below ``-n 4``; (4) within 1.5× of each other.

Run: ``uv run python benchmarks/harness.py [--quick]`` (the 20,000-case run takes minutes).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from needle_lib.testing.openai_server import FakeOpenAIServer  # noqa: E402
from needle_lib.tokens import count_tokens  # noqa: E402


def pytest_process(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``pytest ARGS`` started in the repository, its output captured."""
    # Measure as users run: with bytecode caching on (some sandboxes export
    # PYTHONDONTWRITEBYTECODE, which makes every process recompile pytest and its plugins).
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q", "--no-color"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**base, **(env or {})},
    )


def check_exit(returncode: int, stdout: str) -> None:
    if returncode not in (0, 1):
        raise SystemExit(f"pytest failed ({returncode}):\n{stdout[-3000:]}")


def pytest_run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    with pytest_process(args, env) as proc:
        stdout, _ = proc.communicate()
    wall = time.perf_counter() - started
    check_exit(proc.returncode, stdout)
    return wall, stdout


def overhead_per_case(tmp: Path) -> tuple[float, float, float, int]:
    """(mean, median, largest) seconds of harness time per case, and the case count. The
    largest is the first case of a pair: it also waits for the preflight request, which no
    case's latency includes; the median is the steady per-case cost.

    The loopback server counts usage with the reference tokenizer in this process; it is
    loaded before the run, as a real server has its model loaded before a benchmark."""
    results = tmp / "overhead"
    junit = tmp / "overhead.xml"
    count_tokens("warm up")
    with FakeOpenAIServer("perfect") as server:
        pytest_run(["evals", "--corpus", "jquery", "--corpus", "http_server", "--sample", "999",
                    "--model", "zero", "--base-url", server.url, "--results-dir", str(results),
                    f"--junitxml={junit}", "--html", str(tmp / "overhead.html")])
    case_time = {
        case.get("name"): float(case.get("time", 0))
        for case in ET.parse(junit).getroot().iter("testcase")
    }
    latency = {}
    for dump in results.glob("*.json"):
        data = json.loads(dump.read_text())
        for case in data["cases"]:
            name = f"test_recall[{data['corpus']['name']}-{case['case_id']}-zero]"
            latency[name] = case["latency_s"] or 0.0
    overheads = sorted(case_time[name] - latency[name] for name in latency if name in case_time)
    return (sum(overheads) / len(overheads), overheads[len(overheads) // 2], overheads[-1],
            len(overheads))


def collection_times(tmp: Path) -> dict[str, tuple[float, float]]:
    env = {"NEEDLE_CACHE_DIR": str(tmp / "parse-cache")}
    figures = {}
    for label in ("cold", "warm"):
        wall, out = pytest_run(["evals", "--collect-only"], env)
        reported = float(re.search(r"collected in ([\d.]+)s", out).group(1))
        figures[label] = (reported, wall)
    return figures


PARALLEL_RUNS = {"serial": [], "-n 4": ["-n", "4"], "--concurrency 4": ["--concurrency", "4"]}


def parallel_spans(tmp: Path) -> dict[str, tuple[float, float]]:
    """Per way of running: (span at the server, process wall time), in seconds."""
    figures = {}
    for label, extra in PARALLEL_RUNS.items():
        results = tmp / re.sub(r"\W+", "", label)
        with FakeOpenAIServer("perfect", latency=1.0, slots=4) as server:
            wall, _ = pytest_run(["evals", "--corpus", "jquery", "--sample", "16", "--model",
                                  "slow", "--base-url", server.url, "--results-dir",
                                  str(results), "--html", str(tmp / "p.html"), *extra])
            stats = server.stats
            figures[label] = (stats.last_answer_at - stats.first_request_at, wall)
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        overhead, median, largest, n = overhead_per_case(tmp)
        print(f"1. harness overhead: {overhead * 1000:.2f} ms per case over {n} cases, median "
              f"{median * 1000:.2f} ms, largest {largest * 1000:.0f} ms (a pair's first case: "
              "its preflight) "
              f"(target < 5 ms)")
        coll = collection_times(tmp)
        for label, (reported, wall) in coll.items():
            print(f"2. collection {label}: {reported:.2f} s as pytest reports it, "
                  f"{wall:.2f} s process wall time (target warm < 1.5 s)")
        ideal = 16 * 1.0 / 4 + 1.0
        print(f"3. 16 cases, 1 s latency, 4 slots (ideal {ideal:.1f} s incl. the preflight; "
              "targets: -n 4 ≤ 1.3×, --concurrency 4 ≤ 1.15× and below -n 4):")
        for label, (span, wall) in parallel_spans(tmp).items():
            print(f"   {label:<16} span {span:5.2f} s = {span / ideal:.2f}× ideal; "
                  f"process wall {wall:5.2f} s = {wall / ideal:.2f}× ideal")


def search_scale(quick: bool) -> None:
    from search_scale import search_scale_line  # a sibling script that reuses pytest_run

    print("4. " + search_scale_line(200, 2000 if quick else 20000))


if __name__ == "__main__":
    main()
    search_scale(quick="--quick" in sys.argv)
