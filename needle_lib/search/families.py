"""Engine families: variants of one provider's index (a faster tier, a fresher endpoint).

Two variants of one index return the same URLs by construction, so when we ask "which URLs
did only this engine find?" a URL shared with a sibling still counts as this provider's own
find: a family counts as one engine for uniqueness.
"""

from __future__ import annotations

#: Variant → the family it belongs to (an engine not listed is its own family).
FAMILIES: dict[str, str] = {
    "exa-instant": "exa",
    "keenable-realtime": "keenable",
    "parallel-turbo": "parallel",
}


def family(engine: str) -> str:
    return FAMILIES.get(engine, engine)
