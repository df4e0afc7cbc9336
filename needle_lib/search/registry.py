"""The engine registry: adding an engine is one module plus one ``EngineSpec`` entry here.

``make_engine`` resolves everything a client needs from the environment — the key, the base
URL override ``NEEDLE_<ENGINE>_BASE_URL`` (so tests and proxies can point an engine at
loopback) and env-tuned modes (``TAVILY_DEPTH``) — and raises ``MissingAPIKey`` for a required
key that is unset, which callers turn into a SKIP naming the variable.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from needle_lib.net.retry import RetryPolicy, Sleep
from needle_lib.search.base import HttpSearchClient
from needle_lib.search.brave import BraveClient
from needle_lib.search.ceramic import CeramicClient
from needle_lib.search.exa import ExaClient
from needle_lib.search.keenable import KeenableClient
from needle_lib.search.octen import OctenClient
from needle_lib.search.parallel import ParallelClient
from needle_lib.search.perplexity import PerplexityClient
from needle_lib.search.searchapi import SearchApiBingClient
from needle_lib.search.serper import SerperClient
from needle_lib.search.tavily import TavilyClient
from needle_lib.search.types import MissingAPIKey, UnknownEngine
from needle_lib.search.you import YouClient


@dataclass(frozen=True)
class EngineSpec:
    """How to build one named engine; ``mode_env`` (if set and non-empty) overrides ``mode``."""

    name: str
    client: type[HttpSearchClient]
    key_env: str
    key_optional: bool = False
    mode: str | None = None
    mode_env: str | None = None
    #: Seconds per request: research-style engines (parallel, perplexity) think before they
    #: answer, and cutting them off at the common 30 s would report a working engine as down.
    timeout: float = 30.0

    @property
    def base_url_env(self) -> str:
        return f"NEEDLE_{self.name.upper().replace('-', '_')}_BASE_URL"


_SPECS = (
    EngineSpec("keenable", KeenableClient, "KEENABLE_API_KEY", key_optional=True, mode="pro"),
    EngineSpec(
        "keenable-realtime",
        KeenableClient,
        "KEENABLE_API_KEY",
        key_optional=True,
        mode="realtime",
    ),
    EngineSpec("exa", ExaClient, "EXA_API_KEY", mode="auto"),
    EngineSpec("exa-instant", ExaClient, "EXA_API_KEY", mode="instant"),
    EngineSpec("google", SerperClient, "SERPER_API_KEY"),
    EngineSpec("bing", SearchApiBingClient, "SEARCHAPI_API_KEY"),
    EngineSpec("brave", BraveClient, "BRAVE_API_KEY"),
    EngineSpec("parallel", ParallelClient, "PARALLEL_API_KEY", mode="basic", timeout=60.0),
    EngineSpec("parallel-turbo", ParallelClient, "PARALLEL_API_KEY", mode="turbo", timeout=60.0),
    EngineSpec("tavily", TavilyClient, "TAVILY_API_KEY", mode="basic", mode_env="TAVILY_DEPTH"),
    EngineSpec("perplexity", PerplexityClient, "PERPLEXITY_API_KEY", timeout=60.0),
    EngineSpec("octen", OctenClient, "OCTEN_API_KEY"),
    EngineSpec("ceramic", CeramicClient, "CERAMIC_API_KEY"),
    EngineSpec("you", YouClient, "YOU_API_KEY"),
)

ENGINES: dict[str, EngineSpec] = {spec.name: spec for spec in _SPECS}


def make_engine(
    name: str,
    *,
    snippet_chars: int = 2000,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    sleep: Sleep = asyncio.sleep,
    client: httpx.AsyncClient | None = None,
    env: Mapping[str, str] | None = None,
) -> HttpSearchClient:
    """Build the client for engine ``name`` from ``env`` (default: ``os.environ``).

    ``timeout`` defaults to the engine's own (``EngineSpec.timeout``).
    Raises ``UnknownEngine`` (lists the known names) or ``MissingAPIKey(engine, env_var)``.
    """
    spec = ENGINES.get(name)
    if spec is None:
        raise UnknownEngine(name, list(ENGINES))
    env = os.environ if env is None else env
    api_key = env.get(spec.key_env, "").strip() or None
    if api_key is None and not spec.key_optional:
        raise MissingAPIKey(spec.name, spec.key_env)
    mode = (env.get(spec.mode_env, "").strip() if spec.mode_env else "") or spec.mode
    return spec.client(
        name=spec.name,
        api_key=api_key,
        base_url=env.get(spec.base_url_env, "").strip() or None,
        mode=mode,
        snippet_chars=snippet_chars,
        timeout=timeout or spec.timeout,
        retry=retry,
        sleep=sleep,
        client=client,
    )
