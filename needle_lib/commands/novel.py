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
    generate = actions.add_parser("generate", help="write novel_16k/64k/128k.py and manifest.json")
    generate.add_argument(
        "--out",
        type=Path,
        default=novel.NOVEL_DIR,
        help="output directory (default: fixtures/novel)",
    )
    generate.add_argument(
        "--seeds",
        type=parse_seeds,
        default=novel.DEFAULT_SEEDS,
        metavar="A,B,C",
        help="three seeds, one per third of the targets; rotate them to refresh corpora "
        f"that may have entered training data (default: {_seed_text(novel.DEFAULT_SEEDS)})",
    )
    check = actions.add_parser(
        "check", help="regenerate in memory and compare every file byte for byte"
    )
    check.add_argument(
        "--dir",
        type=Path,
        default=novel.NOVEL_DIR,
        help="directory holding the corpora and manifest.json (default: fixtures/novel)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.novel_action == "generate":
        for path in novel.write(args.out, args.seeds):
            print(f"wrote {path}")
        print(f"seeds {_seed_text(args.seeds)} recorded in {args.out / novel.MANIFEST}")
        return 0
    problems = novel.check(args.dir)
    for problem in problems:
        print(f"needle novel check: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"needle novel check: {args.dir} matches the generator")
    return 0
