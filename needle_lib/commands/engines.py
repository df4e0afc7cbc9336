"""`needle engines`: which search engines exist and whether their key is configured.

Prints only whether a key variable is set — never its value — so the output is safe to paste.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from needle_lib.search.registry import ENGINES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engines", help="list search engines, their key env var and whether it is set"
    )
    parser.set_defaults(func=run)


def engine_rows(env: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """(engine, mode, key env var, status) per registered engine, in registry order."""
    rows = []
    for spec in ENGINES.values():
        if env.get(spec.key_env, "").strip():
            status = "set"
        elif spec.key_optional:
            status = "unset (optional: keyless endpoint)"
        else:
            status = "unset"
        mode = (env.get(spec.mode_env, "").strip() if spec.mode_env else "") or spec.mode or "-"
        rows.append((spec.name, mode, spec.key_env, status))
    return rows


def run(args: argparse.Namespace) -> int:
    rows = [("ENGINE", "MODE", "KEY ENV", "KEY"), *engine_rows(os.environ)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for name, mode, key_env, status in rows:
        print(f"{name:<{widths[0]}}  {mode:<{widths[1]}}  {key_env:<{widths[2]}}  {status}")
    return 0
