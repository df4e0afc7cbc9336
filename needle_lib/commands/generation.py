"""Plumbing shared by every ``needle <bench> generate`` command.

Each bench registers ``needle <bench>`` with an action sub-command ``generate`` (so ``run``
or ``check`` can join later) carrying the flags every generator has: ``--out`` and
``--seed``. Comma-separated flags are checked against the known values up front, so a typo
fails before minutes of polite, rate-limited fetching rather than after. A run reports on
stderr the same way for every bench: its seed first (so a run can be repeated), then where
the rows went and what was dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from needle_lib.benches.rows import RowT, seed_from_hour, write_rows
from needle_lib.clock import utc_now
from needle_lib.console import count_of
from needle_lib.llm import AsyncChatClient, load_dotenv_once, make_async_chat_client
from needle_lib.llm.roles import generation_model_config
from needle_lib.net.sources import SourceClient, SourceUnreachable
from needle_lib.tomlconf import ConfigError

OptionsT = TypeVar("OptionsT")


class Summarised(Protocol):
    """A generator's tally: what it dropped and why, as one line."""

    def summary(self) -> str: ...


#: A generator's rows (each bench's ``QueryRow`` type) and its tally.
Generated = tuple[list[RowT], Summarised]


def csv_choices(known: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """An argparse ``type``: comma-separated values, each one of ``known`` (order kept)."""

    def parse(text: str) -> tuple[str, ...]:
        values = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
        unknown = [v for v in values if v not in known]
        if unknown or not values:
            what = f"unknown value(s) {', '.join(unknown)}" if unknown else "no value given"
            raise argparse.ArgumentTypeError(f"{what}; known values: {', '.join(known)}")
        return values

    return parse


def add_bench_parser(subparsers: argparse._SubParsersAction, bench: str, *, help: str,
                     description: str | None, dest: str | None = None
                     ) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """``needle <bench>`` and its required ACTION sub-commands (``dest``: which one ran)."""
    parser = subparsers.add_parser(bench, help=help, description=description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest=dest or f"{bench}_action", required=True,
                                    metavar="ACTION")
    return parser, actions


def add_generate_parser(subparsers: argparse._SubParsersAction, bench: str, *, help: str,
                        description: str | None) -> argparse.ArgumentParser:
    """``needle <bench> generate`` with ``--out`` and ``--seed``; the bench adds the rest."""
    _, actions = add_bench_parser(subparsers, bench, help=help, description=description)
    generate = actions.add_parser(
        "generate", help=f"generate {bench} gold rows (JSONL)", description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    generate.add_argument("--out", required=True, metavar="PATH",
                          help="where to write the gold rows (JSONL); '-' writes to stdout")
    generate.add_argument("--seed", type=int, default=None,
                          help="seed of every draw (default: derived from the current UTC "
                               "hour, so reruns within the hour draw the same)")
    return generate


def run_generation(prog: str, args: argparse.Namespace,
                   options: Callable[[datetime, int], OptionsT],
                   generate: Callable[[OptionsT, dict[str, str]],
                                      Coroutine[Any, Any, Generated[RowT]]],
                   *, details: Sequence[str] = (),
                   counts: Callable[[list[RowT]], Mapping[str, int]] | None = None,
                   fatal: tuple[type[Exception], ...] = ()) -> int:
    """One ``needle <bench> generate`` run: seed, generate, write, report.

    The seed (``--seed``, else the hour's) is announced with the suites and ``details``
    before any request, so a failed run can be repeated with the same draws. ``fatal``
    errors, and an unreachable source host, end the run with one line; no rows is a failure
    and writes nothing.
    """
    load_dotenv_once()
    now = utc_now()
    seed = args.seed if args.seed is not None else seed_from_hour(now)
    print(f"{prog}: seed {seed}, suites {','.join(args.suites)}"
          + "".join(f", {detail}" for detail in details), file=sys.stderr)
    stops: tuple[type[Exception], ...] = (SourceUnreachable, *fatal)
    try:
        rows, tally = asyncio.run(generate(options(now, seed), dict(os.environ)))
    except stops as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    if not rows:
        print(f"{prog}: no rows generated; {tally.summary()}", file=sys.stderr)
        return 1
    written = write_rows(rows, args.out)
    where = "stdout" if args.out == "-" else args.out
    mix = ", ".join(f"{key} {n}" for key, n in counts(rows).items()) if counts else ""
    print(f"{prog}: wrote {count_of(written, 'row')} to {where}" + (f" ({mix})" if mix else ""),
          file=sys.stderr)
    print(f"{prog}: {tally.summary()}", file=sys.stderr)
    return 0


def generation_llm_or_none(prog: str, skipped: str) -> AsyncChatClient | None:
    """The generation LLM, or None with one line saying that ``skipped`` is skipped and why:
    the suites without an LLM are still worth running."""
    try:
        return make_async_chat_client(generation_model_config())
    except ConfigError as exc:
        print(f"{prog}: {skipped} skipped: {exc}", file=sys.stderr)
        return None


async def close_clients(clients: Iterable[SourceClient], llm: AsyncChatClient | None) -> None:
    for client in clients:
        await client.aclose()
    if llm is not None:
        await llm.aclose()
