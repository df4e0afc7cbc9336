"""The `needle` command: dispatches to the subcommands in ``needle_lib.commands``."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from needle_lib import __version__
from needle_lib.commands import COMMAND_MODULES
from needle_lib.console import force_utf8_streams
from needle_lib.errors import UsageError

DESCRIPTION = """\
Needle's companion commands. The benchmarks themselves run under pytest:

  uv run pytest evals -k jquery                         positional recall, reference model
  uv run pytest evals --model qwen36-35b                recall of a model you serve
  uv run pytest evals -k news --queries Q.jsonl --engines exa,brave   search retrieval

These commands inspect recall targets and dumps, generate search query sets and gold,
publish and chart results, and start offline fakes to try everything without a server."""

EPILOG = """\
Try it offline: `needle serve model --mode mixed`, then the command it prints.
`needle COMMAND --help` describes each command; docs/ has the reference."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="needle", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    except UsageError as exc:  # bad input, named; anything else is a bug with its traceback
        print(f"needle: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """``needle extract --all | head``: the reader closed the pipe, which is how such a
    pipeline ends, not an error. Python's own flush at exit would hit the closed pipe again
    and print a traceback, so stdout is pointed at /dev/null first (the documented recipe);
    the status is the shell's for a process a SIGPIPE ended."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
