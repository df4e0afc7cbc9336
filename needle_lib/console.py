"""Terminal concerns shared by the CLI and the pytest plugin: encoding and colour choice."""

from __future__ import annotations

import os
import sys
from typing import TextIO


def force_utf8_streams() -> None:
    """Write UTF-8 whatever the locale: reports carry ≥, ⚠, ✓ and source text in any script."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (stream.encoding or "").lower() != "utf-8":
            reconfigure(encoding="utf-8", errors="replace")


def want_color(stream: TextIO, flag: bool | None = None) -> bool:
    """Colour on a TTY only, unless an explicit flag or NO_COLOR / FORCE_COLOR says otherwise.

    Precedence: explicit ``--color/--no-color`` > ``NO_COLOR`` > ``FORCE_COLOR`` > isatty.
    Logs copied out of a pipe stay plain text.
    """
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def count_of(number: int, noun: str) -> str:
    """``1 row``, ``4 rows``: a count as a sentence reads it (a regular plural only)."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
