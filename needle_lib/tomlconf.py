"""Strict TOML config sections: every error names the file and the key.

Configs are typed by a small schema (key → expected type(s), required or not) instead of
ad-hoc ``dict.get`` calls, so a typo (``primay_lines``) or a wrong type (``k = "16"``) is
refused up front rather than silently replaced by a default.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, TypeAlias

from needle_lib.errors import UsageError

#: Any TOML value, as ``tomllib`` returns it: narrowed (``isinstance``, or ``check_section``)
#: before use, since a config file is whatever its author wrote.
TOMLValue: TypeAlias = (
    "str | int | float | bool | datetime | date | time | list[TOMLValue] | TOMLTable")
#: A TOML table.
TOMLTable: TypeAlias = "dict[str, TOMLValue]"


class ConfigError(UsageError, ValueError):
    """A config file is missing, unreadable, or does not match its schema."""


@dataclass(frozen=True)
class Key:
    types: tuple[type, ...]
    required: bool = False

    def describe(self) -> str:
        return " or ".join(t.__name__ for t in self.types)


def load_toml(path: Path) -> TOMLTable:
    """Read a TOML file, turning syntax errors into a ConfigError naming the file."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def check_section(
    data: TOMLValue, schema: dict[str, Key], *, path: Path, section: str = ""
) -> dict[str, Any]:
    """Validate one table against ``schema``; return it unchanged when it conforms.

    ``Any`` on purpose: each key now holds one of the types its ``Key`` names, a fact the
    schema knows at run time and mypy cannot see, so callers read values as those types."""
    where = f"{path}: [{section}]" if section else f"{path}:"
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table")
    for key in data:
        if key not in schema:
            known = ", ".join(sorted(schema))
            raise ConfigError(f"{where} unknown key {key!r} (known keys: {known})")
    for key, spec in schema.items():
        if key not in data:
            if spec.required:
                raise ConfigError(f"{where} missing required key {key!r}")
            continue
        value = data[key]
        # bool is an int subclass; a flag must not pass as a count and vice versa.
        ok = isinstance(value, spec.types) and not (
            isinstance(value, bool) and bool not in spec.types
        )
        if not ok and float in spec.types and isinstance(value, int) and not isinstance(
            value, bool
        ):
            ok = True
        if not ok:
            raise ConfigError(
                f"{where} key {key!r} must be {spec.describe()}, got "
                f"{type(value).__name__} {value!r}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            # TOML allows nan and inf; a nan temperature or an infinite timeout would only
            # fail later, in every case of the run.
            raise ConfigError(f"{where} key {key!r} must be a finite number, got {value!r}")
    return data
