"""`needle novel generate | check`: write or verify the generated recall corpora.

Rotating seeds is how the corpora are refreshed once the checked-in fixtures may have
entered training data: ``needle novel generate --seeds 101,202,303`` writes new files and a
new manifest recording those seeds, and ``check`` verifies against whatever seeds the
manifest records.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from needle_lib.recall import novel
from needle_lib.recall.corpus import display_path


def parse_seeds(text: str) -> tuple[int, int, int]:
    """``a,b,c``: three distinct non-negative integers, one per third of the targets."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers"
        ) from None
    try:
        return novel.validate_seeds(values)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seed_text(seeds: tuple[int, int, int]) -> str:
    return ",".join(str(seed) for seed in seeds)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "novel",
        help="generate or verify the contamination-resistant novel_* corpora",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="novel_action", required=True, metavar="ACTION")
    generate = actions.add_parser(
        "generate", help="write one flavour's corpora (e.g. novel_16k/64k/128k.py) and manifest"
    )
    generate.add_argument(
        "--flavour",
        choices=list(novel.FLAVOURS),
        default=novel.PYTHON_FLAVOUR.name,
        help="the language to write (default: python)",
    )
    generate.add_argument(
        "--out",
        type=Path,
        help="output directory (default: the flavour's, "
        + ", ".join(f"{display_path(f.directory)} for {name}" for name, f in novel.FLAVOURS.items())
        + ")",
    )
    generate.add_argument(
        "--seeds",
        type=parse_seeds,
        metavar="A,B,C",
        help="three seeds, one per third of the targets; rotate them to refresh corpora "
        "that may have entered training data (default: the flavour's, "
        + ", ".join(
            f"{_seed_text(f.default_seeds)} for {name}" for name, f in novel.FLAVOURS.items()
        )
        + ")",
    )
    check = actions.add_parser(
        "check", help="regenerate in memory and compare every file byte for byte"
    )
    check.add_argument(
        "--dir",
        type=Path,
        help="directory holding the corpora and manifest.json, whose flavour and seeds it "
        "regenerates (default: every flavour's shipped directory)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.novel_action == "generate":
        flavour = novel.FLAVOURS[args.flavour]
        out = args.out or flavour.directory
        seeds = args.seeds or flavour.default_seeds
        for path in novel.write(flavour, out, seeds):
            print(f"wrote {path}")
        print(f"seeds {_seed_text(seeds)} recorded in {out / novel.MANIFEST}")
        return 0
    directories = [args.dir] if args.dir else [f.directory for f in novel.FLAVOURS.values()]
    problems = [problem for directory in directories for problem in novel.check(directory)]
    for problem in problems:
        print(f"needle novel check: {problem}", file=sys.stderr)
    if problems:
        return 1
    for directory in directories:
        print(f"needle novel check: {directory} matches the generator")
    return 0
