"""Contamination-resistant recall corpora: generated code with opaque names and constants.

Public corpora (jQuery, CPython) may sit in a model's training data, so the headline corpora
are generated from recorded seeds, in one of several flavours (Python, TypeScript) that
share every structural rule. Rotate the seeds (``needle novel generate --seeds``) once the
checked-in fixtures may have been trained on.
"""

from needle_lib.recall.novel.corpus import (
    GENERATOR_VERSION,
    SIZE_RULE,
    NovelCorpus,
    Placement,
    build_corpora,
    prompt_budget,
    validate_seeds,
)
from needle_lib.recall.novel.fixtures import MANIFEST, check, manifest, render, write
from needle_lib.recall.novel.flavours import (
    FLAVOURS,
    PYTHON_FLAVOUR,
    TYPESCRIPT_FLAVOUR,
    Flavour,
)
from needle_lib.recall.novel.pieces import PRIMARY_LINES
from needle_lib.recall.novel.prompts import PromptTokens, prompt_tokens

#: Where the Python corpora (the dashboard's depth pages read their manifest) are shipped.
NOVEL_DIR = PYTHON_FLAVOUR.directory

__all__ = [
    "FLAVOURS",
    "GENERATOR_VERSION",
    "MANIFEST",
    "NOVEL_DIR",
    "PRIMARY_LINES",
    "PYTHON_FLAVOUR",
    "SIZE_RULE",
    "TYPESCRIPT_FLAVOUR",
    "Flavour",
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
