"""Query sets for the search benchmarks: JSONL gold rows or plain text, sampled deterministically.

A malformed row is an error naming the file and line, never a silently dropped query: a
query set that shrinks without notice changes every engine's mean.

Rows in NEEDLE's format load as they are: ``query_text`` (or ``query``), and ``query_origin``
and ``gold`` either as objects or as JSON strings (NEEDLE writes some of each).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needle_lib.jsonio import JSON, JSONObject, loads_untrusted
from needle_lib.tomlconf import ConfigError


@dataclass(frozen=True)
class Query:
    query_id: str
    query: str
    stratum: str | None = None
    #: The query file's row as it was read (JSONL; empty for a plain line): its fields are
    #: the file's (NEEDLE's row format, or a generator's), so it stays JSON.
    row: JSONObject = field(default_factory=dict, compare=False)
    #: Where the row is (``path:line``), for errors about it found after loading.
    where: str = field(default="", compare=False)

    @property
    def source(self) -> str | None:
        """The bench the row was generated for (NEEDLE's ``query_source``), if it says."""
        value = self.row.get("query_source")
        return str(value) if value else None

    @property
    def origin(self) -> JSONObject:
        origin = self.row.get("query_origin")
        return origin if isinstance(origin, dict) else {}

    @property
    def gold(self) -> JSON:
        return self.row.get("gold")


def _text_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


#: Bounds on a query file, which may come from anywhere: a gold row with its evidence is a
#: few KB and a query a few hundred characters, so these only stop a wrong or hostile file
#: (a 1 GB file was read whole before, and ended in a MemoryError).
MAX_LINE_BYTES = 1024 * 1024
MAX_QUERY_CHARS = 4000
MAX_QUERIES = 200_000
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a UTF-8 file, streamed; a BOM is dropped, and UTF-16, binary
    data, an undecodable byte or an overlong line is a ``ConfigError`` naming the line."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ConfigError(f"--queries {path}: cannot read: {exc.strerror or exc}") from None
    with fh:
        head = fh.read(3)
        if head.startswith(_UTF16_BOMS):
            raise ConfigError(f"--queries {path}: UTF-16 text (it starts with a UTF-16 "
                              "byte-order mark); save it as UTF-8")
        fh.seek(len(_UTF8_BOM) if head == _UTF8_BOM else 0)
        number = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            where = f"{path}:{number}"
            if len(raw) > MAX_LINE_BYTES:
                raise ConfigError(f"{where}: line longer than {MAX_LINE_BYTES} bytes; is this "
                                  "a query file (JSONL rows or one query per line)?")
            if b"\x00" in raw:
                raise ConfigError(f"{where}: binary data (a NUL byte); --queries takes UTF-8 "
                                  "JSONL rows or one query per line")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ConfigError(f"{where}: not UTF-8 text (byte {exc.start + 1} of the "
                                  "line); save the file as UTF-8") from None
            yield number, text.rstrip("\r\n")


def file_sha256(path: Path) -> str:
    """The file's sha256, streamed (a query file can be large)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _checked_text(text: str, where: str) -> str:
    if len(text) > MAX_QUERY_CHARS:
        raise ConfigError(f"{where}: query is {len(text)} characters, over the "
                          f"{MAX_QUERY_CHARS}-character limit")
    return text


def load_queries(path: Path) -> list[Query]:
    """JSONL (``query_id``, ``query``, optional stratum fields) or one query per line,
    decided by the first non-blank line."""
    lines = ((n, line) for n, line in _lines(path) if line.strip())
    first = next(lines, None)
    if first is None:
        return []
    rows = itertools.chain([first], lines)
    is_jsonl = first[1].lstrip().startswith("{")
    queries: list[Query] = []
    seen: set[str] = set()
    for number, line in rows:
        where = f"{path}:{number}"
        if len(queries) >= MAX_QUERIES:
            raise ConfigError(f"{where}: more than {MAX_QUERIES} queries; split the file or "
                              "sample it (--sample)")
        if not is_jsonl:
            plain = _checked_text(line.strip(), where)
            queries.append(Query(_text_id(plain), plain, where=where))
            continue
        try:
            row = loads_untrusted(line)
        except ValueError as exc:
            raise ConfigError(f"{where}: not a JSON object: {exc}") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: expected a JSON object, got {type(row).__name__}")
        text = row.get("query_text", row.get("query"))
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}: row has no 'query_text' (or 'query')")
        _checked_text(text.strip(), where)
        for name in ("query_origin", "gold"):
            row[name] = _object_field(row.get(name), name, where)
        query_id = row.get("query_id")
        if not isinstance(query_id, str | int) or str(query_id) == "":
            raise ConfigError(f"{where}: row has no 'query_id'")
        if str(query_id) in seen:
            raise ConfigError(f"{where}: duplicate query_id {query_id!r}")
        seen.add(str(query_id))
        stratum = (row.get("stratum") or row.get("length_bucket") or row.get("bucket")
                    or row.get("topical_domain"))
        queries.append(Query(str(query_id), text.strip(), str(stratum) if stratum else None, row,
                             where))
    return queries


def _object_field(value: Any, name: str, where: str) -> Any:
    """``query_origin``/``gold`` as an object, decoding the JSON-string form."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: '{name}' is a string but not JSON: {exc.msg}") from None


def sample_queries(queries: list[Query], *, sample: int | None, seed: int,
                   limit: int | None) -> list[Query]:
    """``sample`` queries, stratified by ``stratum`` where rows carry one, then ``limit``.

    Each stratum gets a share proportional to its size (largest remainders first), drawn
    with ``random.Random(seed)``; the result keeps file order so runs read naturally.
    """
    chosen = queries
    if sample is not None and sample < len(queries):
        strata: dict[str | None, list[int]] = {}
        for index, query in enumerate(queries):
            strata.setdefault(query.stratum, []).append(index)
        shares = {key: sample * len(members) / len(queries) for key, members in strata.items()}
        counts = {key: int(share) for key, share in shares.items()}
        leftovers = sorted(strata, key=lambda key: (-(shares[key] - counts[key]), str(key)))
        for key in leftovers[: sample - sum(counts.values())]:
            counts[key] += 1
        rng = random.Random(seed)
        picked: list[int] = []
        for key in sorted(strata, key=str):
            picked.extend(rng.sample(strata[key], counts[key]))
        chosen = [queries[i] for i in sorted(picked)]
    return chosen[:limit] if limit else chosen
