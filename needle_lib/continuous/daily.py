"""``daily_queries.jsonl``: the queries evaluated by runs in the last 24 hours, one per line.

Why a rolling window: anyone reusing the archive (to replay queries against their own
engine, or to study what was asked) wants today's questions in one small file, without
walking every run folder. Each row is the query file's own record (``query_id``,
``query_text``, ``query_origin``, ``gold``…) for a query the run scored, plus ``run_id`` and
``bench``; a run whose query file is not at hand contributes ``{run_id, bench, query_id,
query_text}`` from its report. The window ends at the newest run, not at the clock, so a
rebuild from the same runs gives the same file; rows of a re-published run replace its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from needle_lib.continuous.runs import PublishedRun, ReportError, parse_ts
from needle_lib.metrics.ndcg import ULTIMATE

DAILY_FILE = "daily_queries.jsonl"
DAILY_WINDOW = timedelta(hours=24)


def evaluated(run: PublishedRun) -> list[tuple[str, str]]:
    """(query_id, query text) of every query the run holds, in report order."""
    seen: dict[str, str] = {}
    for engine, summary in run.report["engines"].items():
        if engine != ULTIMATE:
            for row in summary["per_query"]:
                seen.setdefault(row["query_id"], row["query"])
    return list(seen.items())


def read_query_records(path: Path) -> list[dict[str, Any]]:
    """A JSON Lines query file's records (plain-text query files have none to add)."""
    if path.suffix != ".jsonl":
        return []
    records = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ReportError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return records


def daily_rows(run: PublishedRun, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's rows for the window: its query file's records for the queries it scored."""
    by_id = {str(r.get("query_id")): r for r in records if isinstance(r, dict)}
    by_text = {str(r.get("query_text")): r for r in by_id.values()}
    rows = []
    for query_id, text in evaluated(run):
        record = by_id.get(query_id) or by_text.get(text) or {
            "query_id": query_id, "query_text": text}
        rows.append({**record, "run_id": run.run_id, "bench": run.bench, "ts": run.ts})
    return rows


def rolling_window(existing: list[dict[str, Any]], runs: list[PublishedRun],
                   new_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Old rows minus those of ``runs``, plus ``new_rows``, cut to 24 h before the newest."""
    replaced = {run.key for run in runs}
    rows = [r for r in existing if (r["bench"], r["run_id"]) not in replaced] + new_rows
    if not rows:
        return []
    end = max(parse_ts(r["ts"]) for r in rows)
    kept = [r for r in rows if parse_ts(r["ts"]) > end - DAILY_WINDOW]
    return sorted(kept, key=lambda r: (r["run_id"], r["bench"]))


def to_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
