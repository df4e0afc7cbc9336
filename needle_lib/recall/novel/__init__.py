"""Contamination-resistant recall corpora: generated Python with opaque names and constants.

Public corpora (jQuery, CPython) may sit in a model's training data, so the headline corpora
are generated from recorded seeds. Rotate the seeds (``needle novel generate --seeds``) once
the checked-in fixtures may have been trained on.
"""

from needle_lib.recall.novel.corpus import (
    DEFAULT_SEEDS,
    GENERATOR_VERSION,
    SIZE_RULE,
    SIZES,
    NovelCorpus,
    Placement,
    build_corpora,
    prompt_budget,
    validate_seeds,
)
from needle_lib.recall.novel.fixtures import MANIFEST, check, manifest, render, write
from needle_lib.recall.novel.pieces import PRIMARY_LINES
from needle_lib.recall.novel.prompts import NOVEL_DIR, PromptTokens, prompt_tokens

__all__ = [
    "DEFAULT_SEEDS",
    "GENERATOR_VERSION",
    "MANIFEST",
    "NOVEL_DIR",
    "PRIMARY_LINES",
    "SIZES",
    "SIZE_RULE",
    "NovelCorpus",
    "Placement",
    "PromptTokens",
    "build_corpora",
    "check",
    "manifest",
    "prompt_budget",
    "prompt_tokens",
    "render",
    "validate_seeds",
    "write",
]
