"""Generated query rows: identity and output, shared by every ``needle <bench> generate``.

Rows follow NEEDLE's row format so files from either tool load in the other:
``query_id``, ``query_text``, ``query_origin`` (where the query came from) and, for
known-item benches, ``gold`` (what counts as finding it).

A ``query_id`` is the hash of the canonical query text plus the UTC hour it was made in:
the same text generated in the same hour is the same query (dedupe), and the hour keeps
fresh-query cohorts of different hours apart.
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from needle_lib.jsonio import JSONObject
from needle_lib.tomlconf import ConfigError


def canonical_text(text: str) -> str:
    """NFC, lowercase, trimmed, whitespace runs collapsed: what makes two queries the same."""
    return " ".join(unicodedata.normalize("NFC", text).lower().split())


def query_hash(text: str) -> str:
    return hashlib.sha256(canonical_text(text).encode("utf-8")).hexdigest()[:16]


def hour_of(moment: datetime) -> datetime:
    """``moment`` in UTC, truncated to the hour (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def query_id(text: str, hour: datetime) -> str:
    """``<16 hex of sha256(canonical text)>_<YYYY-MM-DDTHH>`` (the hour in UTC)."""
    return f"{query_hash(text)}_{hour_of(hour):%Y-%m-%dT%H}"


def seed_from_hour(hour: datetime) -> int:
    """The default seed of a generation run: derived from its UTC hour, so reruns within the
    hour draw the same companies and facts, and the next hour draws afresh."""
    digest = hashlib.sha256(hour_of(hour).isoformat().encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def row_day(row: Mapping[str, Any]) -> date | None:
    """The UTC date of a row's ``hour_ts`` (the day its query was current), or None.

    A judge rates freshness against this date, so a cohort judged a day later is still
    judged as of the hour it was generated in.
    """
    value = row.get("hour_ts")
    if value in (None, ""):
        return None
    try:
        return hour_of(datetime.fromisoformat(str(value))).date()
    except ValueError:
        raise ConfigError(
            f"query {row.get('query_id', '?')}: hour_ts {value!r} is not an ISO date-time"
        ) from None


class RowIdentity(TypedDict):
    """What every generated row has (``generation.QueryRow`` declares the rest)."""

    query_id: str


RowT = TypeVar("RowT", bound=RowIdentity)


def dedupe_rows(rows: Iterable[RowT]) -> list[RowT]:
    """Keep the first row of each ``query_id``, in order."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["query_id"] not in seen:
            seen.add(row["query_id"])
            kept.append(row)
    return kept


def write_rows(rows: Iterable[RowIdentity | JSONObject], out: str) -> int:
    """Write JSONL rows to ``out`` (``-`` = stdout); returns how many were written: query
    rows, or the objects of an artifact (``needle agentic-rare filter``).

    A file is written whole to a temp name and renamed, so an interrupted generation never
    leaves a half gold file that a later run would take for a complete one.
    """
    lines = [json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n" for row in rows]
    if out == "-":
        sys.stdout.writelines(lines)
        sys.stdout.flush()
        return len(lines)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(path)
    return len(lines)
