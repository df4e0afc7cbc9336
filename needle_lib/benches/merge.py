"""Merge search run reports of one run split over machines (by queries or by engines).

A part may also be a killed run's journal (``*.partial.jsonl``): merging it alone turns
what was collected into a report.

The checks every merge makes live in ``kernel.merge`` (setups, shards, a case in two
parts); what is search's is the fold. Pooled figures (nDCG's ideal ranking, ``ultimate``,
overlap, system-specific misses) depend on every engine's answers to a query, so they are
recomputed from the parts' raw cases, never averaged. Parts' engine lists may differ, so a
run can be split by engine; cases no part holds are reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from needle_lib.benches.runfiles import assemble_report, read_run
from needle_lib.contract.records import SearchCaseRecord
from needle_lib.contract.report import report_fields
from needle_lib.contract.schema import (
    SEARCH_RUN_SCHEMA_VERSION,
    engine_modes_of,
    validate_search_run,
)
from needle_lib.kernel.merge import Merged, MergeError, Part, merge
from needle_lib.tomlconf import ConfigError


def read_search_part(path: Path) -> Part:
    """A search report or a killed run's journal as a part to merge (validated on read)."""
    try:
        header, cases = read_run(path)
    except ConfigError as exc:
        raise MergeError(str(exc)) from None
    return Part(path, {"schema_version": SEARCH_RUN_SCHEMA_VERSION, "header": header,
                       "cases": cases, "engines": header["engines"]})


class SearchMerge:
    """Search's ``kernel.merge.MergeFamily``: a case is a (query, engine)."""

    def header(self, part: Part) -> Mapping[str, Any]:
        if "header" not in part.dump or "cases" not in part.dump:
            raise MergeError(f"{part.path}: a search report without 'header' and 'cases' "
                             "(written by an older Needle?) cannot be merged")
        try:
            header, cases = validate_search_run(part.path, part.dump["header"],
                                                part.dump["cases"],
                                                version=part.dump.get("schema_version"))
        except ConfigError as exc:
            raise MergeError(str(exc)) from None
        part.dump["header"], part.dump["cases"] = header, cases  # migrated, if it was older
        return header

    def shard(self, part: Part) -> Mapping[str, Any] | None:
        shard: Mapping[str, Any] | None = part.dump["header"].get("shard")
        return shard

    def cases(self, part: Part) -> list[SearchCaseRecord]:
        return cast("list[SearchCaseRecord]", part.dump["cases"])  # validated by header()

    def key(self, case: SearchCaseRecord) -> tuple[str, str]:
        return case["query_id"], case["engine"]

    def describe(self, key: tuple[str, str]) -> str:
        return f"{key[0]} on {key[1]}"

    def fold(self, parts: list[Part], headers: list[Mapping[str, Any]],
             missing: list[str]) -> Merged:
        engines = list(dict.fromkeys(e for header in headers for e in header["engines"]))
        cases = [case for part in parts for case in part.dump["cases"]]
        count = headers[0]["queries"]["count"]
        header = {**headers[0], "engines": engines, "expected_cases": count * len(engines)}
        header.pop("shard", None)  # the merged report is the whole run, not one part
        modes = {e: m for h in headers for e, m in engine_modes_of(h).items()}  # by engine
        if modes:
            header["engine_modes"] = modes
        starts = [h["started_at"] for h in headers if h.get("started_at")]
        if starts:  # the run started when its first part did (`needle publish` keys runs on it)
            header["started_at"] = min(starts)
        report = assemble_report(header, cases)
        for engine in engines:
            have = sum(1 for c in cases if c["engine"] == engine)
            if have < count:
                missing.append(f"{engine}: {count - have} of {count} queries in no part")
        return Merged(report_fields(report), missing,
                      f"{len(cases)} of {header['expected_cases']} cases "
                      f"({header['bench']}, {len(engines)} engines)")


def merge_search(parts: list[Part]) -> Merged:
    """One report from ``parts``; MergeError when they are not parts of one run."""
    return merge(parts, SearchMerge())
