"""Search runs stay linear: per-case overhead at a small and a large query set (not a test).

Runs ``pytest evals -k news`` serially (``--search-lookahead 1``: one case at a time, so
the gaps measure the harness, not overlap) against zero-latency loopback engines (exa,
brave) and judge, at 200 and 20,000 cases (queries × 2 engines). Each case sends one engine
request, so the gaps between engine requests at the server are the per-case times; the
figure is their mean over the last 200 cases of each run (process start-up excluded). Before
run journals the report was rebuilt after every case, so the per-case time grew with the
run (600 × 2 cases took 25× the time of 100 × 2). Target: the large run's per-case time
within 1.5× of the small run's. Also printed: the final report build time (once per run).

Run: ``uv run python benchmarks/search_scale.py [SMALL LARGE]`` (cases; default 200 20000).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import pytest_run  # noqa: E402

from needle_lib.testing.search_server import FakeSearchServer  # noqa: E402

WINDOW = 200


def per_case(tmp: Path, cases: int) -> tuple[float, float, float]:
    """(mean seconds per case over the run's last WINDOW cases, seconds after the last case,
    peak RSS in MB of the largest pytest process so far: runs go small then large)."""
    queries = tmp / f"q{cases}.txt"
    queries.write_text("".join(f"benchmark query number {i}\n" for i in range(cases // 2)))
    with FakeSearchServer() as server:
        env = {**server.env(), "NEEDLE_CACHE_DIR": str(tmp / f"cache{cases}")}
        pytest_run(["evals", "-k", "news", "--queries", str(queries), "--engines",
                    "exa,brave", "--results-dir", str(tmp / f"r{cases}"),
                    "--html", str(tmp / f"{cases}.html"), "-p", "no:randomly",
                    "--search-lookahead", "1"], env)
        ended = time.monotonic()
        times = server.engine_times
    window = times[-min(WINDOW, len(times) - 1) - 1:]
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    return (window[-1] - window[0]) / (len(window) - 1), ended - times[-1], peak_mb


def search_scale_line(small: int = 200, large: int = 20000) -> str:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as name:
        (a, tail_a, _), (b, tail_b, peak) = (per_case(Path(name), small),
                                             per_case(Path(name), large))
    return (f"search run, serial, zero-latency loopback engines and judge: "
            f"{a * 1000:.1f} ms per case at {small} cases, {b * 1000:.1f} ms at {large} "
            f"(last {WINDOW} cases each): {b / a:.2f}× (target ≤ 1.5×); after the last case "
            f"(final report, HTML, exit): {tail_a:.1f} s and {tail_b:.1f} s; peak RSS of the "
            f"{large}-case run {peak:.0f} MB (targets ≤ 5 ms per case, ≤ 600 MB)")


def main() -> None:
    small, large = (int(a) for a in sys.argv[1:3]) if len(sys.argv) >= 3 else (200, 20000)
    print(search_scale_line(small, large))


if __name__ == "__main__":
    main()
