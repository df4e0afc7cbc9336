"""Argument types shared by ``needle`` subcommands and ``pytest evals`` options."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass


def positive_int(text: str) -> int:
    """A count that must be at least 1: ``--sample 0`` would silently collect nothing."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, like a CI matrix's job number
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(value: str) -> Shard:
    """``--shard`` values: ``I/N`` with 1 ≤ I ≤ N."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (e.g. 2/4), got {value!r}")
    return Shard(int(match[1]), int(match[2]))
