"""Plumbing shared by every ``needle <bench> generate`` command.

Each bench registers ``needle <bench>`` with an action sub-command ``generate`` (so ``run``
or ``check`` can join later) carrying the flags every generator has: ``--out`` and
``--seed``. Comma-separated flags are checked against the known values up front, so a typo
fails before minutes of polite, rate-limited fetching rather than after.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence


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


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def add_generate_parser(subparsers: argparse._SubParsersAction, bench: str, *, help: str,
                        description: str | None) -> argparse.ArgumentParser:
    """``needle <bench> generate`` with ``--out`` and ``--seed``; the bench adds the rest."""
    parser = subparsers.add_parser(bench, help=help, description=description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest=f"{bench}_action", required=True, metavar="ACTION")
    generate = actions.add_parser(
        "generate", help=f"generate {bench} gold rows (JSONL)", description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    generate.add_argument("--out", required=True, metavar="PATH",
                          help="where to write the gold rows (JSONL); '-' writes to stdout")
    generate.add_argument("--seed", type=int, default=None,
                          help="seed of every draw (default: derived from the current UTC "
                               "hour, so reruns within the hour draw the same)")
    return generate
