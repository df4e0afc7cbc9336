"""Helpers to generate from the scholar loopback fake's papers
(``needle_lib.testing.scholar_papers``) with a fake clock."""

from __future__ import annotations

from typing import TextIO

import httpx
from fakeclock import FakeTime

from needle_lib.benches.scholar.generate import Options, Sources, generate
from needle_lib.benches.scholar.sources import ArxivApi, ArxivHtml, EuropePmc, NcbiIdConverter
from needle_lib.llm import make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.testing.scholar_papers import NOW


def make_sources(env: dict[str, str], time: FakeTime, suites=("arxiv", "europepmc"),
                 client: httpx.AsyncClient | None = None) -> Sources:
    kwargs = {"env": env, "sleep": time.sleep, "clock": time.clock, "client": client}
    sources = Sources()
    if "arxiv" in suites:
        sources.arxiv, sources.arxiv_html = ArxivApi(**kwargs), ArxivHtml(**kwargs)
    if "europepmc" in suites:
        sources.europepmc, sources.ncbi = EuropePmc(**kwargs), NcbiIdConverter(**kwargs)
    return sources


async def run_generate(env: dict[str, str], time: FakeTime | None = None,
                       stream: TextIO | None = None, **options):
    """Generate from the fakes at ``env`` (a progress bar on ``stream``); returns (rows,
    tally, time)."""
    time = time or FakeTime()
    options = {"now": NOW, "seed": 7, "per_cell": 2, **options}
    opts = Options(**options)
    sources = make_sources(env, time, opts.suites)
    llm = (make_async_chat_client(generation_model_config(environ=env))
           if opts.llm_buckets else None)
    try:
        rows, tally = await generate(opts, sources, llm, stream=stream)
    finally:
        for client in sources.clients():
            await client.aclose()
        if llm is not None:
            await llm.aclose()
    return rows, tally, time
