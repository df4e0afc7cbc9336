"""Contamination-resistant recall corpora: generated Python with opaque names and constants.

Public corpora (jQuery, CPython) may sit in a model's training data, so the headline corpora
are generated from recorded seeds. Rotate the seeds (``needle novel generate --seeds``) once
the checked-in fixtures may have been trained on.
"""

from needle_lib.recall.novel.corpus import (
    CHARS_PER_TOKEN,
    DEFAULT_SEEDS,
    GENERATOR_VERSION,
    SIZES,
    NovelCorpus,
    Placement,
    build_corpora,
    validate_seeds,
)
from needle_lib.recall.novel.fixtures import MANIFEST, NOVEL_DIR, check, manifest, render, write

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_SEEDS",
    "GENERATOR_VERSION",
    "MANIFEST",
    "NOVEL_DIR",
    "SIZES",
    "NovelCorpus",
    "Placement",
    "build_corpora",
    "check",
    "manifest",
    "render",
    "validate_seeds",
    "write",
]
