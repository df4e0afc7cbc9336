"""Argument types shared by ``needle`` subcommands and ``pytest evals`` options."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A count that must be at least 1: ``--sample 0`` would silently collect nothing."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
