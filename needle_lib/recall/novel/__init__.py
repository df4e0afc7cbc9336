"""Contamination-resistant recall corpora: generated code with opaque names and constants.

Public corpora (jQuery, CPython) may sit in a model's training data, so the headline corpora
are generated from recorded seeds, in one of several flavours (Python, TypeScript) that
share every structural rule. Rotate the seeds (``needle novel generate --seeds``) once the
checked-in fixtures may have been trained on.

The names below are imported on first use (PEP 562): the package holds the generator, and
a run that only asks which corpus is of which flavour (``recall.effective_length``)
imports ``flavours`` alone, not the generator's ten modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

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

    #: Where the Python corpora (the dashboard's depth pages read their manifest) are
    #: shipped.
    NOVEL_DIR: Path

#: Each public name → the module of the package that defines it.
_HOMES = {
    **dict.fromkeys(("GENERATOR_VERSION", "SIZE_RULE", "NovelCorpus", "Placement",
                     "build_corpora", "prompt_budget", "validate_seeds"), "corpus"),
    **dict.fromkeys(("MANIFEST", "check", "manifest", "render", "write"), "fixtures"),
    **dict.fromkeys(("FLAVOURS", "PYTHON_FLAVOUR", "TYPESCRIPT_FLAVOUR", "Flavour"), "flavours"),
    "PRIMARY_LINES": "pieces",
    **dict.fromkeys(("PromptTokens", "prompt_tokens"), "prompts"),
}


def __getattr__(name: str) -> Any:
    if name == "NOVEL_DIR":
        return __getattr__("PYTHON_FLAVOUR").directory
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


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
