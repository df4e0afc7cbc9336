"""Row files: Parquet (the published stream and artifact) or JSONL (anything a user has).

Parquet is read batch by batch, so a stream of millions of queries never sits in memory
whole. Written Parquet is zstd-compressed, and nested cells (lists, dicts) are stored as
JSON text, as the published artifact stores them; readers decode them back.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from needle_lib.benches.agentic_rare.extra import require
from needle_lib.jsonio import JSONObject
from needle_lib.tomlconf import ConfigError

_BATCH_ROWS = 10_000
#: Columns written as JSON text in Parquet, decoded back to objects when read.
JSON_COLUMNS = ("hard_words", "metadata")


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def count_rows(path: Path) -> int:
    """How many rows ``path`` holds (Parquet metadata, or non-blank JSONL lines)."""
    if _is_parquet(path):
        return int(_parquet_file(path).metadata.num_rows)
    with _open_text(path) as handle:
        return sum(1 for line in handle if line.strip())


def _open_text(path: Path):
    try:
        return path.open(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _parquet_file(path: Path) -> Any:
    parquet = require("pyarrow.parquet")
    try:
        return parquet.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable Parquet file ({exc})") from None


def _decoded(row: JSONObject) -> JSONObject:
    for column in JSON_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value[:1] in "[{":
            with contextlib.suppress(ValueError):  # not JSON after all: text passes through
                row[column] = json.loads(value)
    return row


def read_rows(path: Path) -> Iterator[JSONObject]:
    """Every row of ``path``; a malformed JSONL line is an error naming file and line."""
    if _is_parquet(path):
        for batch in _parquet_file(path).iter_batches(batch_size=_BATCH_ROWS):
            for row in batch.to_pylist():
                yield _decoded(row)
        return
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"{path}:{number}: not a JSON object: {exc}") from None
            if not isinstance(row, dict):
                raise ConfigError(f"{path}:{number}: expected a JSON object, "
                                  f"got {type(row).__name__}")
            yield _decoded(row)


def _flat(row: JSONObject) -> JSONObject:
    return {key: json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict)
            else value for key, value in row.items()}


def write_parquet(rows: list[JSONObject], path: Path) -> None:
    """Write ``rows`` to ``path`` (temp file + rename, so a crash leaves no half file)."""
    arrow = require("pyarrow")
    parquet = require("pyarrow.parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        table = arrow.Table.from_pylist([_flat(row) for row in rows])
    except (arrow.ArrowInvalid, arrow.ArrowTypeError) as exc:
        raise ConfigError(f"{path}: rows do not form a table ({exc})") from None
    parquet.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
