"""The optional ``rare`` dependencies, imported on use so Needle runs without them."""

from __future__ import annotations

import importlib
from types import ModuleType

from needle_lib.tomlconf import ConfigError

INSTALL_HINT = "uv sync --extra rare"


def require(module: str) -> ModuleType:
    """``module``, or a one-line error saying how to install the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"agentic-rare needs the optional 'rare' dependencies ({module} is missing): "
            f"run `{INSTALL_HINT}` (pip: needle-evals[rare])"
        ) from None
