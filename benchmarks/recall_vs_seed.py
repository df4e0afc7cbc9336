"""Wall time of ``pytest evals -k jquery`` against the seed's ``bench.py``, on one server.

What the ratio is against: ``benchmarks/seed_recall.py``, a seed-equivalent of
``bench.py run --corpus jquery`` (the seed is not shipped here; that script does its steps as
its spec describes them: TOML config, esprima parse of jquery.js on every run, 16 sampled
targets, one httpx request each, line-LCS scoring, the JSON dump rewritten atomically after
every query). Both are whole processes, timed from just before the process starts to its
exit, against the same zero-latency loopback server: ``FakeOpenAIServer("perfect")``, one
server process per side. The fake counts each prompt's tokens with the reference tokenizer
(0.1–0.3 s for an 86K-token prompt) and remembers the last 32 prompts; each side's warm-up
run fills its own server's memory, so every timed request is answered at once, as from a
server's prefix cache. (One shared server would tokenize again on almost every request —
the sides' 33 prompts evict each other — and that server time would swamp both sides.)

Needle runs as the README says (``python -m pytest evals -k jquery``, pytest-html report
and dumps included), with ``--model zero --base-url <server>`` and a fresh results
directory per round. Both sides are warmed once (bytecode, Needle's parse and token
caches), then run alternately ``--rounds`` times (default 5); the figure is the ratio of
the medians, with every round's ratio beside it, so both sides see the same load.

Also printed: each side's CPU time (user + system, the process and the children it waited
for; the servers' time is not in it), whose ratio depends less on what else the machine is
running than the wall-time ratio does; and where Needle's wall time goes, from one more run
with ``benchmarks/phases.py`` loaded (interpreter and entry-point plugins, Needle's plugin
and configuration, collection, the cases, dumps/terminal/HTML reports, interpreter exit).

``--checkout DIR`` also times Needle from another checkout of the repository (e.g. a
worktree of ``main``: ``git worktree add --detach ../base main``) in the same rounds, run
with this environment's interpreter from that directory, so a change is measured before and
after under the same load.

Target (issue 23): Needle ≤ 0.4× the seed.

Run: ``uv run python benchmarks/recall_vs_seed.py [--rounds N] [--checkout DIR]``
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
PHASES = (
    "plugins loaded",
    "configured",
    "collection starts",
    "first case starts",
    "last case done",
    "reports written",
)


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    # as users run: bytecode caching on (some sandboxes export PYTHONDONTWRITEBYTECODE)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**base, **(extra or {})}


def _timed(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, float]:
    """(start stamp, wall seconds, CPU seconds) of one process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    began = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if proc.returncode != 0:
        raise SystemExit(
            f"{args[:4]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
        )
    return started, wall, cpu


def needle_args(url: str, results: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "evals",
        "-k",
        "jquery",
        "--model",
        "zero",
        "--base-url",
        url,
        "--results-dir",
        str(results),
        "-p",
        "no:cacheprovider",
        "-q",
    ]


def seed_args(url: str, dump: Path) -> list[str]:
    return [sys.executable, str(HERE / "seed_recall.py"), url, str(dump)]


def phase_breakdown(url: str, tmp: Path) -> list[tuple[str, float]]:
    """Seconds spent before each phase stamp (and to exit) in one Needle run."""
    out = tmp / "phases.json"
    env = _env(
        {
            "NEEDLE_PHASES_OUT": str(out),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        }
    )
    started, wall, _ = _timed([*needle_args(url, tmp / "phase-results"), "-p", "phases"], env)
    stamps = json.loads(out.read_text())
    spans, last = [], started
    for name in PHASES:
        spans.append((f"until {name}", stamps[name] - last))
        last = stamps[name]
    spans.append(("until exit", started + wall - last))
    return spans


@contextlib.contextmanager
def fake_server() -> Iterator[str]:
    """A zero-latency ``FakeOpenAIServer("perfect")`` in its own process; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "needle_lib.testing.openai_server", "perfect"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait()


def _option(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main() -> None:
    rounds = int(_option("--rounds") or 5)
    checkout = Path(_option("--checkout")).resolve() if _option("--checkout") else None
    env = _env()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        seed_url, needle_url = (stack.enter_context(fake_server()) for _ in range(2))
        contenders = {
            "seed-equivalent bench.py": lambda i: (seed_args(seed_url, tmp / f"s{i}.json"), ROOT),
            "pytest evals -k jquery": lambda i: (needle_args(needle_url, tmp / f"n{i}"), ROOT),
        }
        if checkout is not None:
            base_url = stack.enter_context(fake_server())
            contenders[f"  … from {checkout.name}"] = lambda i: (
                needle_args(base_url, tmp / f"c{i}"),
                checkout,
            )
        walls: dict[str, list[float]] = {label: [] for label in contenders}
        cpus: dict[str, list[float]] = {label: [] for label in contenders}
        for make in contenders.values():  # warm-up: bytecode, parse and token caches
            args, cwd = make("warm")
            _timed(args, env, cwd)
        for index in range(rounds):
            order = list(contenders) if index % 2 == 0 else list(reversed(contenders))
            for label in order:
                args, cwd = contenders[label](str(index))
                _, wall, cpu = _timed(args, env, cwd)
                walls[label].append(wall)
                cpus[label].append(cpu)
        spans = phase_breakdown(needle_url, tmp)
    seed = walls["seed-equivalent bench.py"]
    for label, times in walls.items():
        ratios = ", ".join(f"{n / s:.2f}" for n, s in zip(times, seed, strict=True))
        print(
            f"{label:<26} median {statistics.median(times):5.2f} s = "
            f"{statistics.median(times) / statistics.median(seed):.2f}× the seed "
            f"(rounds: {', '.join(f'{w:.2f}' for w in times)} s; ratios {ratios})"
        )
    seed_cpu = statistics.median(cpus["seed-equivalent bench.py"])
    for label, times in cpus.items():
        print(
            f"{label:<26} CPU    {statistics.median(times):5.2f} s = "
            f"{statistics.median(times) / seed_cpu:.2f}× the seed's CPU"
        )
    print("target: pytest evals -k jquery ≤ 0.4× the seed")
    print("where one Needle run's time goes:")
    for label, seconds in spans:
        print(f"  {label:<24} {seconds:6.2f} s")


if __name__ == "__main__":
    main()
