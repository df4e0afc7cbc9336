"""Search runs at the physical limit, from one process (not a test).

The limit of a search run is the longest of: each engine's searches one at a time
(queries × that engine's latency) and the judge calls at the judge's concurrency
(calls × judge latency / concurrency). Each scenario runs ``pytest evals -k news`` against
loopback engines and judge with those latencies, counts the judge calls the server answered,
and prints the run's time as a ratio to that limit (measured in this run, so load cancels):

  A. the issue's run: 100 queries × 2 engines (exa, brave) at 0.3 s, a 0.5 s judge at
     concurrency 8 (target ≤ 1.2×);
  B. 14 engines × 120 queries at 0.2–2 s per engine and a 2 s judge at concurrency 64
     (limit 266 s: judging 8,520 calls; the slowest lane needs 240 s), time-scaled by
     ``--scale`` (default 0.1) (target ≤ 1.2×).

Two figures per run: the span from the first engine request to process exit (the work the
harness schedules) and the process wall time (adds start-up and collection), and the CPU
the pytest process used (per case and per judge call). NEEDLE's own ``news run`` is not
compared here: it is not installed (and its ``needle`` entry point would shadow ours in one
environment).

What a scale measures: scaling every latency by ``--scale`` keeps the schedule (the ratio of
lanes to judging, the look-ahead, the concurrency) and divides the time, but multiplies the
call rate: the CPU a run needs stays the same (about 40 s for B), so at 0.1 (a 27 s limit)
B is CPU-bound on one interpreter, not a scheduling figure. ``--scale 0.5`` (a 133 s limit,
a third of a core) measures the schedule in about 2.5 minutes; ``--scale 1`` is the real
latencies (about 5 minutes). ``--b-queries`` shortens B at the same rates, but the start and
the tail then weigh more. ``--trace`` prints where the time went: each lane's busy and
stalled time, the judge's slots in use per tenth of the span, the tail after the last
search.

Run: ``uv run python benchmarks/search_limit.py [--scale 0.1] [--only A|B] [--trace]``.
"""

from __future__ import annotations

import argparse
import itertools
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

from harness import pytest_run  # noqa: E402

from needle_lib.testing.search_server import FakeSearchServer  # noqa: E402

MOUNTED_ENGINE = """description = "loopback engine {name}"
method = "GET"
base_url = "{url}/{name}"
path = "/search"

[request]
query = "q"

[request.fixed]
format = "json"

[response]
results = "results"
url = "url"
title = "title"
snippet = "content"
"""


@dataclass(frozen=True)
class Scenario:
    label: str
    queries: int
    latency: dict[str, float]  # per engine, and "judge"
    judge_concurrency: int


def mounted_root(tmp: Path, url: str, engines: list[str]) -> Path:
    """A NEEDLE_ROOT whose configs/engines defines ``engines`` as SearXNG-shaped loopback
    engines (corpora, models and fixtures are the repository's)."""
    root = tmp / "root"
    (root / "configs" / "engines").mkdir(parents=True)
    for name in ("corpora", "models"):
        (root / "configs" / name).symlink_to(ROOT / "configs" / name)
    (root / "fixtures").symlink_to(ROOT / "fixtures")
    for name in engines:
        (root / "configs" / "engines" / f"{name}.toml").write_text(
            MOUNTED_ENGINE.format(name=name, url=url))
    return root


Timeline = list[tuple[str, float, float]]


def where_time_went(timeline: Timeline, engines: list[str], concurrency: int, start: float,
                    end: float) -> str:
    """Why a run is above its limit, from the server's view of every request: each lane's
    busy share of the span and its stalls (time idle between its own searches), the
    judge's slots in use over each tenth of the span, and the tail after the last search."""
    span = end - start
    lines = []
    for engine in engines:
        own = sorted((a, b) for what, a, b in timeline if what == engine)
        busy = sum(b - a for a, b in own)
        stalled = sum(max(0.0, a - b) for (_, b), (a, _) in itertools.pairwise(own))
        lines.append(f"{engine} busy {busy:.0f} s ({busy / span:.0%}), stalled "
                     f"{stalled:.0f} s, first at {own[0][0] - start:.1f} s, last done at "
                     f"{own[-1][1] - start:.1f} s")
    judge = [(a, b) for what, a, b in timeline if what == "judge"]
    tenths = []
    for i in range(10):
        lo, hi = start + span * i / 10, start + span * (i + 1) / 10
        used = sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in judge)
        tenths.append(f"{used / (hi - lo) / concurrency:.0%}")
    last_search = max(b for what, a, b in timeline if what != "judge")
    last_judge = max(b for a, b in judge)
    lines.append("judge slots in use per tenth of the span: " + " ".join(tenths))
    lines.append(f"last search answered at {last_search - start:.1f} s, last judge call at "
                 f"{last_judge - start:.1f} s, process exit at {span:.1f} s")
    return "\n".join("    " + line for line in lines)


def warm_parse_cache(cache: Path) -> None:
    """Collect the recall corpora once into ``cache``: a search run collects them too (then
    deselects them), and a cold parse cache added seconds of CPU to every figure."""
    pytest_run(["evals", "--collect-only"], {"NEEDLE_CACHE_DIR": str(cache)})


def run_scenario(tmp: Path, cache: Path, scenario: Scenario, *, trace: bool = False) -> str:
    engines = [e for e in scenario.latency if e != "judge"]
    queries = tmp / "q.txt"
    queries.write_text("".join(f"{scenario.label} query number {i}\n"
                               for i in range(scenario.queries)))
    with FakeSearchServer(latency=scenario.latency) as server:
        for stale in cache.glob("judge.sqlite3*"):
            stale.unlink()  # every verdict asked afresh; the corpora's parse cache stays warm
        env = {**server.env(), "NEEDLE_CACHE_DIR": str(cache)}
        mounted = [e for e in engines if e not in ("exa", "brave")]
        if mounted:
            env["NEEDLE_ROOT"] = str(mounted_root(tmp, server.url, mounted))
        cpu_before = _children_cpu()
        wall, _ = pytest_run(["evals", "-k", "news", "--queries", str(queries), "--engines",
                              ",".join(engines), "--judge-concurrency",
                              str(scenario.judge_concurrency), "--results-dir",
                              str(tmp / "results"), "--html", str(tmp / "report.html")], env)
        ended = time.monotonic()
        cpu = _children_cpu() - cpu_before
        span = ended - server.engine_times[0]
        judge_calls = server.requests["judge"]
        started = server.engine_times[0]
        timeline = list(server.timeline)
        assert server.max_in_flight["judge"] <= scenario.judge_concurrency
        assert all(server.max_in_flight[e] == 1 for e in engines)
    lanes = max(scenario.queries * scenario.latency[e] for e in engines)
    judging = judge_calls * scenario.latency["judge"] / scenario.judge_concurrency
    limit = max(lanes, judging)
    summary = (f"{scenario.label}: {scenario.queries} queries × {len(engines)} engines, "
            f"{judge_calls} judge calls; limit {limit:.1f} s (slowest lane {lanes:.1f} s, "
            f"judging {judging:.1f} s): span {span:.1f} s = {span / limit:.2f}× the limit, "
            f"process wall {wall:.1f} s = {wall / limit:.2f}× (target ≤ 1.2×)")
    cases = scenario.queries * len(engines)
    summary += (f"\n    pytest process CPU (collection included) {cpu:.0f} s = "
                f"{cpu / span:.0%} of a core over the span; {1000 * cpu / cases:.0f} ms per "
                f"case, {1000 * cpu / judge_calls:.1f} ms per judge call; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not trace:
        return summary
    return summary + "\n" + where_time_went(timeline, engines, scenario.judge_concurrency,
                                             started, ended)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scenarios(scale: float, b_queries: int) -> dict[str, Scenario]:
    wide = {f"lane{i:02d}": round((0.2 + 1.8 * i / 13) * scale, 4) for i in range(14)}
    return {
        "A": Scenario("A", 100, {"exa": 0.3, "brave": 0.3, "judge": 0.5}, 8),
        "B": Scenario("B", b_queries, {**wide, "judge": 2.0 * scale}, 64),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1, help="time scale of scenario B")
    parser.add_argument("--b-queries", type=int, default=120,
                        help="queries of scenario B (fewer: a shorter run at the same rates)")
    parser.add_argument("--only", choices=("A", "B"), default=None)
    parser.add_argument("--trace", action="store_true",
                        help="also print where the time went (lanes, judge slots, tail)")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    print("NEEDLE's `news run` is not run here (its `needle` entry point would shadow "
          "ours; install it in another venv to compare): ratios are to the limit")
    with tempfile.TemporaryDirectory() as shared:
        cache = Path(shared) / "cache"
        warm_parse_cache(cache)
        for key, scenario in scenarios(args.scale, args.b_queries).items():
            if args.only not in (None, key):
                continue
            with tempfile.TemporaryDirectory() as name:
                print(run_scenario(Path(name), cache, scenario, trace=args.trace), flush=True)


if __name__ == "__main__":
    main()
