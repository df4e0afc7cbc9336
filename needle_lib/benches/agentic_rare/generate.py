"""``needle agentic-rare generate``: query rows sampled from the filtered artifact.

The sample is stratified by ``length_bucket`` (round-robin over buckets, then rows), so a
small ``--limit`` still mixes medium and long queries; rows are the judged benches' query
rows (``query_id``, ``query_text``, ``query_origin``, ``hour_ts``) plus ``length_bucket``
for the eval's own stratified ``--sample``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypeAlias, TypedDict

from needle_lib.benches import generation
from needle_lib.benches.generation import QueryRow
from needle_lib.benches.rows import dedupe_rows, hour_of, seed_from_hour
from needle_lib.benches.sampling import stratified_sample
from needle_lib.jsonio import JSON, JSONObject
from needle_lib.tomlconf import ConfigError

QUERY_SOURCE = "agentic_rare"
DEFAULT_LIMIT = 100


def _text(row: JSONObject, query_field: str) -> str | None:
    for field in (query_field, "query_text", "query"):
        value = row.get(field)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


class RareProvenance(TypedDict):
    """Copied from the filtered artifact's row as it is (``needle agentic-rare filter``
    wrote it, from a data set whose fields we do not decide)."""

    producer: str
    source: JSON
    metadata: JSON
    hard_words: JSON


class RareOrigin(TypedDict):
    bucket: str
    subcategory: str
    provenance: RareProvenance


#: A row ``needle agentic-rare generate`` writes (judged: no gold).
RareRow: TypeAlias = QueryRow[RareOrigin]


def _length_bucket(row: JSONObject, number: int) -> str:
    bucket = row.get("length_bucket")
    if bucket is None or bucket == "":
        return "unknown"
    if not isinstance(bucket, str):
        raise ConfigError(f"row {number}: 'length_bucket' must be a string, got {bucket!r}")
    return bucket


def query_row(row: JSONObject, text: str, hour: datetime, *, number: int = 0) -> RareRow:
    """The query row of artifact row ``number`` (1-based, for errors)."""
    bucket = _length_bucket(row, number)
    origin: RareOrigin = {
        "bucket": QUERY_SOURCE,
        "subcategory": f"rare_{bucket}",
        "provenance": {
            "producer": QUERY_SOURCE,
            "source": row.get("source"),
            "metadata": row.get("metadata"),
            "hard_words": row.get("hard_words"),
        },
    }
    return generation.query_row(text, hour, source=QUERY_SOURCE, origin=origin,
                                extra={"length_bucket": bucket})


def sample_query_rows(rows: Iterable[JSONObject], *, now: datetime, limit: int,
                      seed: int | None, query_field: str = "query_text") -> list[RareRow]:
    """``limit`` query rows (0 = all), stratified by length bucket, deterministic for a seed
    (default: the UTC hour's)."""
    hour = hour_of(now)
    made = []
    for number, row in enumerate(rows, start=1):
        text = _text(row, query_field)
        if text is None:
            raise ConfigError(f"row {number} has no {query_field!r} text")
        made.append(query_row(row, text, hour, number=number))
    unique = dedupe_rows(made)
    chosen = seed if seed is not None else seed_from_hour(hour)
    return stratified_sample(unique, lambda r: r["length_bucket"], limit, chosen)
