"""A clock that only moves when something sleeps: rate limits and backoff checked exactly."""

from __future__ import annotations

from datetime import UTC, datetime


class FakeTime:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


PINNED_NOW = datetime(2026, 7, 2, 14, 25, tzinfo=UTC)
"""The moment every test runs as (``NEEDLE_NOW``, set by an autouse fixture in conftest)."""
