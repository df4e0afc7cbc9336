"""Search runs stay linear and cheap per case: a small and a large query set (not a test).

Runs ``pytest evals -k news`` serially (``--search-lookahead 1``: one case at a time, so
the gaps measure the harness, not overlap) against zero-latency loopback engines (exa,
brave) and judge, at 200 and 20,000 cases (queries × 2 engines). Each case sends one engine
request, so the gaps between engine requests at the server are the per-case times; the
figure is their mean over the last 200 cases of each run (process start-up excluded). Before
run journals the report was rebuilt after every case, so the per-case time grew with the
run (600 × 2 cases took 25× the time of 100 × 2). Target: the large run's per-case time
within 1.5× of the small run's.

Per size it prints: wall and CPU milliseconds per case (CPU: the pytest process's user +
system time between those engine requests, read from ``/proc`` as each arrives; on a loaded
machine the wall figure includes waiting for a core, the CPU figure does not; and the main
thread's share: pytest and the harness, while the engine and judge HTTP clients run on the
event loop's thread), wall and CPU seconds after the last case (final report, HTML page,
exit), and the process's peak RSS. A case's time includes its six or so HTTP round trips
(one search, about five judge calls) through the client; the loopback server runs in this
process.

Run: ``uv run python benchmarks/search_scale.py [SMALL LARGE]`` (cases; default 200 20000).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import check_exit, pytest_process  # noqa: E402

from needle_lib.testing.search_server import FakeSearchServer  # noqa: E402

WINDOW = 200
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Scale:
    cases: int
    wall_ms: float  # per case, over the last WINDOW cases
    cpu_ms: float
    main_cpu_ms: float  # the main thread's share of cpu_ms
    tail_s: float  # after the last case
    tail_cpu_s: float
    peak_mb: float


def cpu_seconds(stat: str) -> float:
    """User + system CPU seconds of a live process or thread (a Linux ``/proc`` stat file)."""
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class ArrivalLog(list):
    """``engine_times`` that also notes the pytest process's CPU time at each arrival, all
    of it and its main thread's (pytest and the harness: the HTTP clients run on the
    event loop's thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.pid = 0
        self.cpu: list[float] = []
        self.main_cpu: list[float] = []

    def append(self, when: float) -> None:
        self.cpu.append(cpu_seconds(f"/proc/{self.pid}/stat"))
        self.main_cpu.append(cpu_seconds(f"/proc/{self.pid}/task/{self.pid}/stat"))
        super().append(when)


def measure(tmp: Path, cases: int) -> Scale:
    """One serial run of ``cases`` cases. Runs go small then large, so the children's peak
    RSS after a run is that run's (the larger so far)."""
    queries = tmp / f"q{cases}.txt"
    queries.write_text("".join(f"benchmark query number {i}\n" for i in range(cases // 2)))
    cpu_before = children_cpu()
    with FakeSearchServer() as server:
        arrivals = server.engine_times = ArrivalLog()
        env = {**server.env(), "NEEDLE_CACHE_DIR": str(tmp / f"cache{cases}")}
        with pytest_process(["evals", "-k", "news", "--queries", str(queries), "--engines",
                             "exa,brave", "--results-dir", str(tmp / f"r{cases}"),
                             "--html", str(tmp / f"{cases}.html"), "-p", "no:randomly",
                             "--search-lookahead", "1"], env) as proc:
            arrivals.pid = proc.pid
            stdout, _ = proc.communicate()
        ended = time.monotonic()
    check_exit(proc.returncode, stdout)
    total_cpu = children_cpu() - cpu_before
    start = -min(WINDOW, len(arrivals) - 1) - 1
    times, cpu, main = arrivals[start:], arrivals.cpu[start:], arrivals.main_cpu[start:]
    return Scale(cases, (times[-1] - times[0]) / (len(times) - 1) * 1000,
                 (cpu[-1] - cpu[0]) / (len(cpu) - 1) * 1000,
                 (main[-1] - main[0]) / (len(main) - 1) * 1000, ended - times[-1],
                 total_cpu - arrivals.cpu[-1],
                 resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)  # KiB


def search_scale_line(small: int = 200, large: int = 20000) -> str:
    with tempfile.TemporaryDirectory() as name:
        a, b = measure(Path(name), small), measure(Path(name), large)
    sizes = "; ".join(
        f"{s.cases} cases: {s.wall_ms:.1f} ms wall, {s.cpu_ms:.1f} ms CPU ({s.main_cpu_ms:.1f} "
        f"ms main thread) per case (last {WINDOW}), {s.tail_s:.1f} s wall, "
        f"{s.tail_cpu_s:.1f} s CPU after the last case, "
        f"peak RSS {s.peak_mb:.0f} MB" for s in (a, b))
    return (f"search run, serial, zero-latency loopback engines and judge: {sizes}; "
            f"per-case wall {b.wall_ms / a.wall_ms:.2f}×, CPU {b.cpu_ms / a.cpu_ms:.2f}× "
            f"(target ≤ 1.5×; ≤ 5 ms per case, ≤ 600 MB, a few seconds after the last case)")


def main() -> None:
    small, large = (int(a) for a in sys.argv[1:3]) if len(sys.argv) >= 3 else (200, 20000)
    print(search_scale_line(small, large))


if __name__ == "__main__":
    main()
