"""A report's row tables (per engine, per query; a run's cases): in memory, or spooled.

A report built from cases already in memory (``needle merge``, a re-read run) keeps its rows
as lists. A run in flight spools each row to disk as JSON text the moment its query is
scored: the report is then written at the run's end by copying text, and the controller
holds no row, so the end of a 20,000-case run neither re-reads nor re-encodes its cases.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import IO, Generic, Protocol, TypeVar

from needle_lib.contract.report import JudgedQueryRow, KnownItemQueryRow

#: A report's per-query row, of either kind.
Row = TypeVar("Row", JudgedQueryRow, KnownItemQueryRow)


class RowTables(Protocol[Row]):
    """Where a report fold puts its rows, one table per name (an engine, ``ultimate``)."""

    def add(self, name: str, row: Row) -> None: ...

    def table(self, name: str) -> list[Row] | SpooledRows: ...


class MemoryTables(Generic[Row]):
    """Rows kept as lists."""

    def __init__(self) -> None:
        self._rows: dict[str, list[Row]] = {}

    def add(self, name: str, row: Row) -> None:
        self._rows.setdefault(name, []).append(row)

    def table(self, name: str) -> list[Row]:
        return self._rows.get(name, [])


class SpooledRows:
    """One table's rows as JSON text (``json.dumps(row, ensure_ascii=False)`` a line each) in
    an unnamed temporary file: ``jsonio`` writes it as the list it stands for."""

    def __init__(self) -> None:
        # closed by close(): the file lives as long as its run
        self._file: IO[str] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", newline="\n")
        self._count = 0

    def append(self, row: JudgedQueryRow | KnownItemQueryRow) -> None:
        self.append_encoded(json.dumps(row, ensure_ascii=False))

    def append_encoded(self, row: str) -> None:
        """A row already JSON text (``json.dumps(row, ensure_ascii=False)``)."""
        self._file.write(row + "\n")
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def encoded(self) -> Iterator[str]:
        """Each row's JSON text, in the order added."""
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield line[:-1]
        self._file.seek(0, 2)  # later rows append

    def close(self) -> None:
        self._file.close()


class SpooledTables:
    """Rows spooled per table (see ``SpooledRows``); ``close`` removes every file."""

    def __init__(self) -> None:
        self._tables: dict[str, SpooledRows] = {}

    def add(self, name: str, row: JudgedQueryRow | KnownItemQueryRow) -> None:
        self.table(name).append(row)

    def table(self, name: str) -> SpooledRows:
        if name not in self._tables:
            self._tables[name] = SpooledRows()
        return self._tables[name]

    def close(self) -> None:
        for rows in self._tables.values():
            rows.close()
