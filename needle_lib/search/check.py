"""A live check of engines: one real, cheap query each, before a long run depends on them.

Why: a wrong key, an expired plan, a proxy in the way or an API that changed its shape would
otherwise surface as hundreds of ERROR cases an hour into a benchmark. One request per
engine, through the same client a run uses, says in a line whether it answers and what.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from needle_lib.net.retry import Sleep
from needle_lib.search.registry import EngineSpec, make_engine
from needle_lib.search.types import MissingAPIKey

CHECK_QUERY = "python programming language"
CHECK_RESULTS = 3


@dataclass(frozen=True)
class EngineCheck:
    """One engine's answer: ``status`` is ok, failed or skipped (its key is not set)."""

    engine: str
    status: str
    latency_s: float | None = None
    results: int = 0
    first_url: str | None = None
    detail: str | None = None

    def line(self, width: int) -> str:
        head = f"{self.engine:<{width}}  {self.status:<7}"
        if self.status == "ok":
            latency = f"{(self.latency_s or 0) * 1000:6.0f} ms"
            return f"{head} {latency}  {self.results} results  {self.first_url or '-'}"
        return f"{head} {self.detail}"


async def check_engine(name: str, *, engines: Mapping[str, EngineSpec], env: Mapping[str, str],
                       query: str, num_results: int, sleep: Sleep) -> EngineCheck:
    try:
        client = make_engine(name, env=env, engines=engines, sleep=sleep)
    except MissingAPIKey as exc:
        return EngineCheck(name, "skipped", detail=f"set {exc.env_var} to check it")
    async with client:
        answer = await client.search(query, num_results=num_results)
    if answer.error is not None:
        return EngineCheck(name, "failed", latency_s=answer.latency_s,
                           detail=" ".join(answer.error.split()))
    first = answer.results[0].url if answer.results else None
    return EngineCheck(name, "ok", answer.latency_s, len(answer.results), first)


async def check_engines(names: Sequence[str], *, engines: Mapping[str, EngineSpec],
                        env: Mapping[str, str], query: str = CHECK_QUERY,
                        num_results: int = CHECK_RESULTS,
                        sleep: Sleep = asyncio.sleep) -> list[EngineCheck]:
    """Check ``names`` concurrently (each is a different service); results in ``names`` order."""
    return list(await asyncio.gather(*(
        check_engine(name, engines=engines, env=env, query=query, num_results=num_results,
                     sleep=sleep)
        for name in names
    )))
