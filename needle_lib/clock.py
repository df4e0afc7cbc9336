"""The moment queries are drawn and judged for: the wall clock, unless ``NEEDLE_NOW`` pins it.

Generation seeds from the UTC hour, dates its freshness windows from today and stamps rows
with the hour; the judge rates freshness as of today and an open ``after:`` range ends
today. A rerun needs the same moment to draw and judge the same way, so ``NEEDLE_NOW``
(ISO 8601; a time without a zone is UTC) lets a user repeat a run as of a past hour, and
lets tests pin the moment so no outcome depends on when they run. Latencies, timeouts and
``Retry-After`` dates keep the real clock: they measure time, not the moment a run is for.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime

from needle_lib.tomlconf import ConfigError

NOW_ENV = "NEEDLE_NOW"


def utc_now() -> datetime:
    """``NEEDLE_NOW`` when set (a malformed value is a ConfigError naming it), else now."""
    pinned = os.environ.get(NOW_ENV, "").strip()
    if not pinned:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(pinned)
    except ValueError:
        raise ConfigError(f"{NOW_ENV}={pinned!r} is not an ISO 8601 time "
                          "(e.g. 2026-07-02T14:25:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def utc_today() -> date:
    """The UTC date of :func:`utc_now`."""
    return utc_now().date()


def pinned_moment() -> str | None:
    """``NEEDLE_NOW`` as the moment it pins (ISO 8601, UTC), or None when the clock is free."""
    return utc_now().isoformat() if os.environ.get(NOW_ENV, "").strip() else None


def clock_record() -> dict[str, str | None]:
    """What a report keeps of the moment it ran for, so a rerun can be told apart from a
    run as of another day: ``pinned`` (the ``NEEDLE_NOW`` moment, None when unset), ``now``
    (the moment in use at the start) and ``judge_today`` (the date freshness is judged
    against for a query that brings no date of its own). A report used to keep only the
    wall-clock start, so a run judged as of a pinned day looked like one judged today."""
    now = utc_now()
    return {"pinned": pinned_moment(), "now": now.isoformat(timespec="seconds"),
            "judge_today": now.date().isoformat()}
