"""Needle against hostile servers on loopback: bounded time and memory (not a test).

Prints, each measured in this run against ``needle_lib.testing.hostile_server``:
  1. wall time per case under an endless stream (64 KiB chunks as fast as loopback goes:
     the size cap ends it) and under a 1-byte-per-0.1-s drip (the deadline ends it), with
     ``timeout = T`` and the default three attempts (the deadline is per attempt, so a case
     costs at most about 3 × T plus the retry backoff; before, it lasted as long as the
     stream);
  2. peak RSS of a process that asks for a 50 MB answer, and for a gzip bomb (about 1 MB
     on the wire that inflates to 1 GiB), next to the same process asking for a small
     answer, and next to the 50 MB answer read with the cap raised above it (what every
     answer cost before; the bomb cost its whole inflated body, 5.3 GB RSS). A process's
     peak includes start-up, so a capped answer can vanish under it;
  3. the same for a search engine fed the bomb (the response cap, 16 MiB by default).

Each memory figure comes from a fresh child process (``ru_maxrss``), so they do not mix.

Run: ``uv run python benchmarks/hostile_servers.py [--timeout 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from needle_lib.llm.client import ChatClient  # noqa: E402
from needle_lib.llm.config import DEFAULTS, ModelConfig  # noqa: E402
from needle_lib.llm.errors import LLMError  # noqa: E402
from needle_lib.net.retry import RetryPolicy  # noqa: E402
from needle_lib.search.exa import ExaClient  # noqa: E402
from needle_lib.testing.hostile_server import HostileServer, gzip_bomb  # noqa: E402

GiB = 1024**3
MiB = 1024**2


def model(base_url: str, timeout: float, cap: int) -> ModelConfig:
    return ModelConfig(name="m", label="m", key="m", source="bench", base_url=base_url,
                       timeout=timeout, max_answer_bytes=cap)


def chat_case(base_url: str, timeout: float,
              cap: int = DEFAULTS["max_answer_bytes"]) -> tuple[float, str]:
    """One recall-style case: the chat call under the default retry policy."""
    start = time.monotonic()
    with ChatClient(model(base_url, timeout, cap), retry=RetryPolicy()) as client:
        try:
            result = client.complete([{"role": "user", "content": "hi"}])
            outcome = (f"answered, {len(result.content):,} chars"
                       + (" (truncated by needle)" if result.truncated_by_needle else ""))
        except LLMError as exc:
            outcome = f"{type(exc).__name__} after {exc.attempts} attempt(s)"
    return time.monotonic() - start, outcome


def search_case(base_url: str) -> str:
    async def run() -> str:
        async with ExaClient(name="exa", api_key="k", base_url=base_url) as engine:
            outcome = await engine.search("q", num_results=5)
        return outcome.error or f"{len(outcome.results)} results"
    return asyncio.run(run())


def child(mode: str, url: str) -> None:
    """Runs in a fresh process: one request, then its peak RSS as JSON on stdout."""
    if mode.startswith("search-"):
        outcome = search_case(f"{url}/{mode.removeprefix('search-')}")
    elif mode == "huge-uncapped":  # the cap raised above the answer: what it cost before
        _, outcome = chat_case(f"{url}/huge", timeout=120, cap=64 * MiB)
    else:
        _, outcome = chat_case(f"{url}/{mode}", timeout=120)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mib": peak_kib / 1024, "outcome": outcome}))


def measured(mode: str, url: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, "--child", mode, "--url", url],
                          capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--child")
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.url)
        return
    print("building the gzip bomb (1 GiB inflated)…", flush=True)
    wire = len(gzip_bomb(GiB))
    print(f"gzip bomb: {wire / MiB:.2f} MiB on the wire → {GiB / MiB:,.0f} MiB inflated")
    with HostileServer(max_seconds=600, drip_interval=0.1, huge_bytes=50 * MiB,
                       bomb_bytes=GiB) as server:
        print(f"\n1. wall time per case, timeout = {args.timeout:g} s, 3 attempts "
              "(backoff 1 s + 2 s):")
        for mode in ("endless", "drip"):
            seconds, outcome = chat_case(f"{server.url}/{mode}", args.timeout)
            bound = 3 * args.timeout + 3
            print(f"   {mode:<8} {seconds:6.1f} s  ({seconds / bound:.2f} × the bound "
                  f"3T + 3 s = {bound:g} s)  {outcome}")
        print("\n2. peak RSS of one chat call (fresh process each):")
        base = measured("items", server.url)  # a small JSON answer: the process's own size
        print(f"   small answer    {base['peak_mib']:7.1f} MiB  (baseline)")
        for mode, what in (("huge-uncapped", "50 MB, no cap"), ("huge", "50 MB answer"),
                           ("bomb", "gzip bomb, 1 GiB")):
            row = measured(mode, server.url)
            extra = float(row["peak_mib"]) - float(base["peak_mib"])  # type: ignore[arg-type]
            print(f"   {what:<15} {row['peak_mib']:7.1f} MiB  (+{extra:.1f} MiB over the "
                  f"baseline)  {row['outcome']}")
        print("\n3. peak RSS of one search call:")
        row = measured("search-bomb", server.url)
        extra = float(row["peak_mib"]) - float(base["peak_mib"])  # type: ignore[arg-type]
        print(f"   gzip bomb       {row['peak_mib']:7.1f} MiB  (+{extra:.1f} MiB)  "
              f"{row['outcome']}")


if __name__ == "__main__":
    main()
