"""Reading a source's JSON body (``SourceClient.get_json`` gives ``jsonio.JSON``).

A public source decides its own shapes and changes them without notice, and a
misconfigured base URL can point at anything that answers JSON. So a field is narrowed
before use, and a field present with the wrong type is a ``SourceError`` naming the source,
the URL and the field: the run says the source changed instead of dying on a ``TypeError``
deep in a generator. A field left out (missing or null) is not an error here: sources omit
what they do not know, and the caller decides what absent means (usually "no value").
"""

from __future__ import annotations

from dataclasses import dataclass

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.net.sources import SourceError


def kind(value: JSON) -> str:
    """The JSON name of ``value``'s type, as an error message says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def member(value: JSON, *keys: str) -> JSON:
    """``value[k1][k2]…``, or None where a level is not an object or lacks the key: for
    optional nested fields, where any break in the path means "not given"."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


@dataclass(frozen=True)
class Body:
    """One response body being read: the source and URL every error names."""

    source: str
    url: str

    def error(self, field: str, expected: str, value: JSON) -> SourceError:
        return SourceError(self.source, self.url,
                           f"{field}: expected {expected}, got {kind(value)}")

    def object(self, value: JSON, field: str, *, optional: bool = False) -> JSONObject:
        """``value`` as an object; ``{}`` if absent and ``optional``."""
        if isinstance(value, dict):
            return value
        if value is None and optional:
            return {}
        raise self.error(field, "an object", value)

    def list(self, value: JSON, field: str, *, optional: bool = False) -> list[JSON]:
        """``value`` as an array; ``[]`` if absent and ``optional``."""
        if isinstance(value, list):
            return value
        if value is None and optional:
            return []
        raise self.error(field, "an array", value)

    def text(self, value: JSON, field: str) -> str:
        """``value`` as text, whitespace kept: a number is spelled out (ids come as either),
        an absent value is ``""``."""
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise self.error(field, "a string", value)
