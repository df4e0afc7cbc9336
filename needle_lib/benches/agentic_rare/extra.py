"""The optional ``rare`` dependencies, imported on use so Needle runs without them."""

from __future__ import annotations

from types import ModuleType

from needle_lib.extras import require_extra


def require(module: str) -> ModuleType:
    """``module``, or a one-line error saying how to install the extra that provides it."""
    return require_extra(module, "rare", "agentic-rare")
