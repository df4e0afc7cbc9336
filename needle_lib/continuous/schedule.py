"""When each search bench runs, and which benches a trigger is due to run.

The cadence is the seed's: news every hour (fresh queries each time), the other benches once
a day at spread hours with fresh gold. Each daily bench has its own cron line, so a trigger
says by *which line fired* what it runs: GitHub starts scheduled workflows late, often by
tens of minutes, and a check of the wall-clock hour would then skip the day's run.
A daily bench whose gold file is missing also runs (it generates its gold first), so a
fresh data branch fills itself on the next trigger instead of waiting up to a day.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from needle_lib.tomlconf import ConfigError

MINUTE = 17  # off the hour, when every other cron job on the runner starts
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Cadence:
    """One bench's place in the schedule."""

    bench: str
    #: UTC hour of the daily run; None = every hour.
    hour: int | None
    #: Gold kept between runs (``<gold dir>/<file>``); None = fresh queries on every run.
    gold_file: str | None

    @property
    def period(self) -> timedelta:
        return HOUR if self.hour is None else DAY


SCHEDULE: dict[str, Cadence] = {
    "news": Cadence("news", None, None),
    "finance": Cadence("finance", 0, "finance.jsonl"),
    "agentic_rare": Cadence("agentic_rare", 6, None),
    "scholar": Cadence("scholar", 12, "scholar.jsonl"),
    "legal": Cadence("legal", 18, "legal.jsonl"),
}
HOURLY = tuple(name for name, c in SCHEDULE.items() if c.hour is None)
DAILY = tuple(name for name, c in SCHEDULE.items() if c.hour is not None)


def cron_lines() -> dict[str, tuple[str, ...]]:
    """Cron line → benches it runs: one line per daily hour (which also runs the hourly
    benches), and one line for the remaining hours."""
    daily_hours = sorted({hour for b in DAILY if (hour := SCHEDULE[b].hour) is not None})
    lines = {
        f"{MINUTE} {hour} * * *": (*HOURLY, *(b for b in DAILY if SCHEDULE[b].hour == hour))
        for hour in daily_hours
    }
    rest = [h for h in range(24) if h not in daily_hours]
    lines[f"{MINUTE} {_ranges(rest)} * * *"] = HOURLY
    return lines


def _ranges(hours: list[int]) -> str:
    """``[1, 2, 3, 5]`` → ``1-3,5`` (cron list syntax)."""
    parts: list[str] = []
    start = prev = hours[0]
    for hour in [*hours[1:], None]:
        if hour is not None and hour == prev + 1:
            prev = hour
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if hour is not None:
            start = prev = hour
    return ",".join(parts)


@dataclass(frozen=True)
class Due:
    bench: str
    reason: str  # "schedule", "dispatch" or "gold missing"


def gold_missing(bench: str, gold_dir: Path | None) -> bool:
    """True when the bench keeps gold between runs and its file is absent or empty."""
    name = SCHEDULE[bench].gold_file
    if name is None or gold_dir is None:
        return False
    path = gold_dir / name
    return not path.is_file() or path.stat().st_size == 0


def due(*, cron: str | None = None, dispatch: Iterable[str] = (),
        gold_dir: Path | None = None) -> list[Due]:
    """The benches a trigger runs, in schedule order: those of the cron line that fired (or
    those picked by hand), then any daily bench whose gold is missing."""
    chosen: dict[str, str] = {}
    if cron is not None:
        lines = cron_lines()
        if cron.strip() not in lines:
            raise ConfigError(f"cron line {cron!r} is not in the schedule; known: "
                              + "; ".join(lines))
        chosen.update((b, "schedule") for b in lines[cron.strip()])
    for bench in dispatch:
        if bench not in SCHEDULE:
            raise ConfigError(f"unknown bench {bench!r}; scheduled: {', '.join(SCHEDULE)}")
        chosen.setdefault(bench, "dispatch")
    for bench in DAILY:
        if bench not in chosen and gold_missing(bench, gold_dir):
            chosen[bench] = "gold missing"
    return [Due(b, chosen[b]) for b in SCHEDULE if b in chosen]


def dispatch_choice(inputs: str) -> list[str]:
    """The benches ticked in a manual dispatch, from the workflow's inputs as JSON
    (``{"news": true, "finance": false, …}``; GitHub may send booleans as strings)."""
    try:
        data = json.loads(inputs)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"dispatch inputs are not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError("dispatch inputs must be a JSON object of bench → true/false")
    return [bench for bench in SCHEDULE if str(data.get(bench, "false")).lower() == "true"]
