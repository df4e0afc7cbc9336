"""`needle scholar generate`: gold rows for the scholar known-item benchmark.

Papers from the arXiv API (computer, physical, life and social sciences) and Europe PMC
(health sciences, open access with full text), balanced over domain × age cells; four
queries per paper (title, body, clue, tot). body/clue/tot need the generation LLM
(OPENROUTER_API_KEY, or NEEDLE_LLM_MODEL / NEEDLE_LLM_BASE_URL for another server); title
alone needs none. No source needs a key; NEEDLE_CONTACT (your email) goes into the
User-Agent and NCBI's email parameter when set. arXiv is paced at one API call per 3 s, so
the listings of a full run (5 domains × 3 ages × 7 papers, ~100 arXiv calls) take about
five minutes before full texts and LLM calls.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from needle_lib.argtypes import positive_int
from needle_lib.benches.scholar.buckets import BUCKETS
from needle_lib.benches.scholar.generate import (
    DEFAULT_AGE_BUCKETS,
    DEFAULT_PER_CELL,
    SUITES,
    Options,
    ScholarRow,
    Sources,
    Tally,
    generate,
)
from needle_lib.benches.scholar.papers import AGE_BUCKETS
from needle_lib.benches.scholar.sources import ArxivApi, ArxivHtml, EuropePmc, NcbiIdConverter
from needle_lib.commands.generation import (
    add_generate_parser,
    close_clients,
    csv_choices,
    run_generation,
)
from needle_lib.llm import AsyncChatClient, make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.tomlconf import ConfigError

PROG = "needle scholar generate"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_generate_parser(subparsers, "scholar",
                                 help="scholar known-item gold (arXiv, Europe PMC)",
                                 description=__doc__)
    parser.add_argument("--suites", type=csv_choices(SUITES), default=SUITES, metavar="LIST",
                        help=f"comma-separated suites (default: {','.join(SUITES)})")
    parser.add_argument("--age-buckets", type=csv_choices(AGE_BUCKETS),
                        default=DEFAULT_AGE_BUCKETS, metavar="LIST",
                        help=f"paper ages (default: {','.join(DEFAULT_AGE_BUCKETS)}; "
                             f"known: {','.join(AGE_BUCKETS)})")
    parser.add_argument("--per-cell", type=positive_int, default=DEFAULT_PER_CELL, metavar="N",
                        help=f"papers per domain × age cell (default: {DEFAULT_PER_CELL})")
    parser.add_argument("--buckets", type=csv_choices(BUCKETS), default=BUCKETS,
                        metavar="LIST",
                        help=f"queries per paper (default: {','.join(BUCKETS)})")
    parser.set_defaults(func=run)


def _llm(options: Options) -> AsyncChatClient | None:
    if not options.llm_buckets:
        return None
    try:
        return make_async_chat_client(generation_model_config())
    except ConfigError as exc:
        raise ConfigError(
            f"scholar generate: buckets {','.join(options.llm_buckets)} need the generation "
            f"LLM ({exc}); set it up or pass --buckets title") from None


def _sources(suites: tuple[str, ...], env: dict[str, str]) -> Sources:
    arxiv: ArxivApi | None
    arxiv_html: ArxivHtml | None
    europepmc: EuropePmc | None
    ncbi: NcbiIdConverter | None
    if "arxiv" in suites:
        arxiv, arxiv_html = ArxivApi(env=env), ArxivHtml(env=env)
    else:
        arxiv = arxiv_html = None
    if "europepmc" in suites:
        europepmc, ncbi = EuropePmc(env=env), NcbiIdConverter(env=env)
    else:
        europepmc = ncbi = None
    return Sources(arxiv=arxiv, arxiv_html=arxiv_html, europepmc=europepmc, ncbi=ncbi)


async def _generate(options: Options, env: dict[str, str]) -> tuple[list[ScholarRow], Tally]:
    llm = _llm(options)
    sources = _sources(options.suites, env)
    try:
        return await generate(options, sources, llm, stream=sys.stderr)
    finally:
        await close_clients(sources.clients(), llm)


def run(args: argparse.Namespace) -> int:
    def options(now: datetime, seed: int) -> Options:
        return Options(now=now, seed=seed, suites=args.suites, age_buckets=args.age_buckets,
                       per_cell=args.per_cell, buckets=args.buckets)

    details = (f"ages {','.join(args.age_buckets)}", f"{args.per_cell} per cell",
               f"buckets {','.join(args.buckets)}")
    return run_generation(PROG, args, options, _generate, details=details)
