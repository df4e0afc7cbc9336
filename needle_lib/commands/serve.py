"""`needle serve model|search|sources`: the shipped loopback fakes, for trying Needle offline.

The fakes are the ones the test suite runs against (``needle_lib.testing``), so what a new
user sees here (FAILED diffs, ERRORs, a search run, a generate run) is what the tests pin.
Each prints, once it is listening, exactly what to pass to Needle, and serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from dataclasses import dataclass

from needle_lib.testing.openai_server import MODES, FakeOpenAIServer

#: Default ports, printed in the docs' walk-through; ``--port 0`` takes any free port.
DEFAULT_PORTS = {"model": 8401, "search": 8402, "sources": 8403}
SEARCH_ENGINES = ("exa", "brave", "searxng")
SOURCE_WORLDS = ("finance",)


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

    sources = kinds.add_parser("sources", help="the public sources a gold generator reads",
                               description="Invented companies on fake SEC, Wikidata and "
                               "GLEIF APIs plus a generation LLM (on the next port), for "
                               "`needle finance generate`.")
    sources.add_argument("world", choices=SOURCE_WORLDS, help="which generator's sources")
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
    server = FakeOpenAIServer.on_port(args.port)(args.mode, latency=args.latency,
                                                 slots=args.slots)
    with server:
        yield Served(f"fake model server ({args.mode}) at {server.url}", [
            f"uv run pytest evals --corpus http_server --model fake-{args.mode} "
            f"--base-url {server.url}",
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
    from needle_lib.testing.finance_sources import LLM_MODEL, FakeFilingLLM, FakeFinanceSources

    llm_port = args.port + 1 if args.port else 0
    with ExitStack() as stack:
        sources = stack.enter_context(FakeFinanceSources.on_port(args.port)())
        llm = stack.enter_context(FakeFilingLLM.on_port(llm_port)())
        env = {**sources.env(), "NEEDLE_LLM_BASE_URL": llm.url, "NEEDLE_LLM_MODEL": LLM_MODEL,
               "OPENROUTER_API_KEY": "fake-llm-key"}
        yield Served(f"fake finance sources at {sources.url}, generation LLM at {llm.url}",
                     _export(env))


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Start the fake, print what to copy, serve until Ctrl-C (or ``stop`` is set)."""
    start: Callable[[argparse.Namespace], AbstractContextManager[Served]] = args.start
    try:
        with start(args) as info:
            print(info.headline, flush=True)
            for line in info.lines:
                print(f"  {line}", flush=True)
            print("Ctrl-C stops it.", flush=True)
            with suppress(KeyboardInterrupt):
                (stop or threading.Event()).wait()
    except OSError as exc:
        print(f"needle serve: cannot listen on 127.0.0.1:{args.port} ({exc.strerror}); "
              "pass --port N, or --port 0 for any free port", file=sys.stderr)
        return 1
    return 0
