"""The `needle` command: dispatches to the subcommands in ``needle_lib.commands``."""

from __future__ import annotations

import argparse
import importlib
import sys

from needle_lib import __version__
from needle_lib.commands import COMMAND_MODULES
from needle_lib.console import force_utf8_streams
from needle_lib.tomlconf import ConfigError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="needle", description=__doc__)
    parser.add_argument("--version", action="version", version=f"needle {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    force_utf8_streams()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"needle: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
