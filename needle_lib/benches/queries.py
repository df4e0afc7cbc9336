"""Query sets for the search benchmarks: JSONL gold rows or plain text, sampled deterministically.

A malformed row is an error naming the file and line, never a silently dropped query: a
query set that shrinks without notice changes every engine's mean.

Rows in NEEDLE's format load as they are: ``query_text`` (or ``query``), and ``query_origin``
and ``gold`` either as objects or as JSON strings (NEEDLE writes some of each).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needle_lib.tomlconf import ConfigError


@dataclass(frozen=True)
class Query:
    query_id: str
    query: str
    stratum: str | None = None
    row: dict[str, Any] = field(default_factory=dict, compare=False)
    #: Where the row is (``path:line``), for errors about it found after loading.
    where: str = field(default="", compare=False)

    @property
    def source(self) -> str | None:
        """The bench the row was generated for (NEEDLE's ``query_source``), if it says."""
        value = self.row.get("query_source")
        return str(value) if value else None

    @property
    def origin(self) -> dict[str, Any]:
        return self.row.get("query_origin") or {}

    @property
    def gold(self) -> Any:
        return self.row.get("gold")


def _text_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def load_queries(path: Path) -> list[Query]:
    """JSONL (``query_id``, ``query``, optional stratum fields) or one query per line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"--queries {path}: cannot read: {exc.strerror or exc}") from None
    first = next((line for line in lines if line.strip()), "")
    if not first.lstrip().startswith("{"):
        return [Query(_text_id(line.strip()), line.strip()) for line in lines if line.strip()]
    queries: list[Query] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not a JSON object: {exc.msg}") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: expected a JSON object, got {type(row).__name__}")
        text = row.get("query_text", row.get("query"))
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}: row has no 'query_text' (or 'query')")
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
