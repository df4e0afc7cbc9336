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

from needle_lib.continuous.runs import PublishedRun, ReportError, parse_ts
from needle_lib.jsonio import JSONObject
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


def read_query_records(path: Path) -> list[JSONObject]:
    """A JSON Lines query file's records (plain-text query files have none to add). A
    record's shape is its query file's writer's (Needle's generators, or NEEDLE's published
    files: ``query_id``, ``query_text``, ``query_origin``, ``gold``…), so it is kept whole as
    JSON; only the keys the window needs are read from it."""
    if path.suffix != ".jsonl":
        return []
    records = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ReportError(f"{path}:{number}: not JSON ({exc.msg})") from None
                if isinstance(record, dict):  # anything else names no query: skipped
                    records.append(record)
    return records


def daily_rows(run: PublishedRun, records: Iterable[JSONObject]) -> list[JSONObject]:
    """The run's rows for the window: its query file's records for the queries it scored,
    each with ``run_id``, ``bench`` and ``ts`` (``contract.history.RunRow``'s keys)."""
    by_id = {str(r.get("query_id")): r for r in records}
    by_text = {str(r.get("query_text")): r for r in by_id.values()}
    rows = []
    for query_id, text in evaluated(run):
        record: JSONObject = by_id.get(query_id) or by_text.get(text) or {
            "query_id": query_id, "query_text": text}
        rows.append({**record, "run_id": run.run_id, "bench": run.bench, "ts": run.ts})
    return rows


def rolling_window(existing: list[JSONObject], runs: list[PublishedRun],
                   new_rows: list[JSONObject]) -> list[JSONObject]:
    """Old rows minus those of ``runs``, plus ``new_rows``, cut to 24 h before the newest."""
    replaced = {run.key for run in runs}
    rows = [r for r in existing if (str(r["bench"]), str(r["run_id"])) not in replaced] + new_rows
    if not rows:
        return []
    end = max(parse_ts(str(r["ts"])) for r in rows)
    kept = [r for r in rows if parse_ts(str(r["ts"])) > end - DAILY_WINDOW]
    return sorted(kept, key=lambda r: (str(r["run_id"]), str(r["bench"])))


def to_jsonl(rows: list[JSONObject]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
