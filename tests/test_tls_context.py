"""HTTPS clients share one CA-verifying context: the bundle is loaded once per process,
not once per engine client and judge pool (about 0.1 s of CPU each)."""

from __future__ import annotations

import ssl

from needle_lib.judge.config import judge_model_config
from needle_lib.llm.client import AsyncChatClient
from needle_lib.net.tls import ca_context
from needle_lib.search.exa import ExaClient
from needle_lib.search.tavily import TavilyClient


def _contexts(transport) -> list[ssl.SSLContext]:
    pools = getattr(transport, "_pools", [transport])
    return [pool._pool._ssl_context for pool in pools]


async def test_engines_and_the_judge_share_one_verifying_context(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    shared = ca_context()
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.cert_store_stats()["x509_ca"] > 0
    engines = [ExaClient(name="exa", api_key="k"), TavilyClient(name="tavily", api_key="k")]
    judge = AsyncChatClient(judge_model_config(None), connections=16)
    assert judge.config.base_url.startswith("https://")
    contexts = [c for e in engines for c in _contexts(e._http()._transport)]
    contexts += _contexts(judge._http._transport)
    assert len(contexts) == 4 and all(c is shared for c in contexts)
    for engine in engines:
        await engine.aclose()
    await judge.aclose()
