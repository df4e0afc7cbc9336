"""Optional dependencies, imported on use so the default install runs without them."""

from __future__ import annotations

import importlib
from types import ModuleType

from needle_lib.tomlconf import ConfigError


def require_extra(module: str, extra: str, feature: str) -> ModuleType:
    """``module``, or a one-line error naming the feature and the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"{feature} needs the optional '{extra}' dependencies ({module} is missing): "
            f"run `uv sync --extra {extra}` (pip: needle-evals[{extra}])"
        ) from None
