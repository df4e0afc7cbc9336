"""The engine-neutral vocabulary every search client speaks.

Failures are data: a client returns a ``SearchOutcome`` whose ``error`` names the engine and what
went wrong, so one flaky engine never aborts a benchmark run and reports can list it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from needle_lib.errors import UsageError


@dataclass(frozen=True)
class SearchResult:
    """One ranked hit as the engine returned it, its fields bounded (``search.bounds``)."""

    url: str
    title: str
    snippet: str
    published_date: str | None = None
    #: Fields Needle cut to their cap (``"title"``, ``"url"``, ``"date"``, ``"snippet"``):
    #: the text kept is a head, not the whole.
    truncated: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchOutcome:
    """Results, or an error text (never both meaningful), plus the wall time the caller waited."""

    results: tuple[SearchResult, ...]
    error: str | None
    latency_s: float
    #: Requests sent again under the retry policy (429, 5xx, timeouts) before this outcome.
    retries: int = 0
    #: Result-list entries skipped as malformed (not an object, or without a URL).
    malformed: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as ``results, error, latency_s`` for callers that prefer a tuple."""
        return iter((self.results, self.error, self.latency_s))


class UnknownEngine(UsageError, ValueError):
    """An engine name that is not registered; the message lists the known ones."""

    def __init__(self, engine: str, known: list[str]) -> None:
        super().__init__(f"unknown engine {engine!r}; known engines: {', '.join(sorted(known))}")
        self.engine = engine


class MissingAPIKey(UsageError):
    """A required env var (an API key, or a self-hosted engine's base URL) is unset: callers
    turn this into a SKIP that names the variable."""

    def __init__(self, engine: str, env_var: str) -> None:
        super().__init__(f"engine {engine!r} needs {env_var} to be set")
        self.engine = engine
        self.env_var = env_var
