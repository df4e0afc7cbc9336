"""The novel flavours: one syntax each, with the corpora it ships and where.

A flavour is the language the generator writes; the structure (targets, decoys, layout,
sizes, eligibility) is the same for all. Each flavour has its own default seeds, so its
target names and bodies are not a transliteration of another flavour's: a model that saw
the Python corpora learns nothing about the TypeScript ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from needle_lib.paths import FIXTURES_DIR
from needle_lib.recall.novel.syntax import PYTHON, TYPESCRIPT, Syntax


@dataclass(frozen=True)
class Flavour:
    """A language the generator writes and the corpora shipped in it."""

    name: str  # as `needle novel generate --flavour` and the manifest name it
    syntax: Syntax
    sizes: dict[str, int]  # corpus name → the context it is made for, in units of 1,024 tokens
    default_seeds: tuple[int, int, int]
    directory: Path  # where the corpora and their manifest are shipped


PYTHON_FLAVOUR = Flavour(
    "python",
    PYTHON,
    {"novel_16k": 16, "novel_64k": 64, "novel_128k": 128},
    (48_611, 73_019, 90_247),
    FIXTURES_DIR / "novel",
)
# Two sizes: enough for paired positions (the same targets at the same depths in a 16K and
# a 64K context) at a sixth of the Python flavour's shipped bytes.
TYPESCRIPT_FLAVOUR = Flavour(
    "typescript",
    TYPESCRIPT,
    {"novel_ts_16k": 16, "novel_ts_64k": 64},
    (27_541, 61_283, 83_917),
    FIXTURES_DIR / "novel_ts",
)
FLAVOURS = {flavour.name: flavour for flavour in (PYTHON_FLAVOUR, TYPESCRIPT_FLAVOUR)}
