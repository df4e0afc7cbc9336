"""The history directory's rows are typed models (``contract.history``): a history written
before them reads with the same figures and is written back byte for byte; a damaged row
is refused naming its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from needle_lib.continuous.runs import ReportError, parse_ts
from needle_lib.continuous.store import Site
from needle_lib.contract.history import JudgedRow, KnownItemRow, RunProgress
from needle_lib.dashboard.search_views import bench_views, mean_jaccard

# Rows as a publish wrote them before the models (key order and separators of
# ``json.dumps(row, ensure_ascii=False, sort_keys=True)``), from one history of main's.
KNOWN_ITEM = (
    '{"bench": "finance", "complete": true, "engine": "exa", "groups": {"bucket": '
    '{"filings": {"n": 3, "recall": 0.6666666666666666}, "finance": {"n": 3, "recall": '
    '0.3333333333333333}}, "tier": {}}, "judge_errors": 0, "judge_upgrades": 0, '
    '"judged_results": 0, "k": 5, "kind": "known_item", "latency_n": 6, '
    '"misses_system_specific": 2, "misses_universal": 1, "mrr": 0.3055555555555555, '
    '"num_queries": 6, "num_scored": 6, "p50_s": 1.1300601766899425, "p95_s": '
    '1.2541027594996033, "recall": 0.5, "retries": 0, "run_id": "20260701T001700Z", '
    '"search_errors": 0, "skipped": 0, "ts": "2026-07-01T00:17:00Z"}')
JUDGED = (
    '{"bench": "news", "complete": false, "engine": "brave", "judge_errors": 1, "k": 5, '
    '"kind": "judged", "latency_n": 0, "ndcg": null, "num_queries": 4, "num_scored": 0, '
    '"p50_s": null, "p95_s": null, "retries": 2, "run_id": "20260702T001700Z", '
    '"search_errors": 4, "skipped": 0, "ts": "2026-07-02T00:17:00Z"}')
# an overlap row of a publish before ``shared_urls`` was counted
OVERLAP = ('{"a": "exa", "b": "keenable", "bench": "finance", "jaccard_sum": 0.5, '
           '"low_shared_urls": 1, "num_queries": 6, "num_shared3": 0, "num_suspect": 1, '
           '"run_id": "20260701T001700Z", "ts": "2026-07-01T00:17:00Z"}')
UNIQUENESS = ('{"bench": "finance", "engine": "exa", "family": "exa", "num_queries": 6, '
              '"relevant_total_urls": 3, "relevant_unique_urls": 3, "run_id": '
              '"20260701T001700Z", "total_urls": 18, "ts": "2026-07-01T00:17:00Z", '
              '"unique_urls": 18}')
SCORES = ('{"bench": "finance", "kind": "known_item", "metrics": {"recall": {"exa": [0.0, '
          '1.0, null]}}, "qids": ["4c26c23dfedeaba5", "02779399032a4f33", '
          '"498f35bdf24333f8"], "run_id": "20260701T001700Z", "ts": "2026-07-01T00:17:00Z"}')
DAILY = ('{"bench": "finance", "gold": {"answer": "Ada"}, "query_id": "f0", "query_origin": '
         '"sec", "query_text": "who runs 0", "run_id": "20260701T001700Z", "ts": '
         '"2026-07-01T00:17:00Z"}')
# ``latest/`` and ``runs/`` entries (``json.dumps`` in insertion order)
REPORT = {"kind": "known_item", "header": {"engines": ["exa", "keenable"]}, "engines": {}}
ENTRY = {"bench": "finance", "run_id": "20260701T001700Z", "ts": "2026-07-01T00:17:00Z",
         "complete": True, "source": "finance__f-20260701-001700.json", "report": REPORT}
PENDING = {"bench": "legal", "run_id": "20260703T181701Z", "ts": "2026-07-03T18:17:01Z",
           "complete": False, "source": "legal__l.shard-1-of-2.json", "report": REPORT,
           "progress": {"have": 1, "count": 2}}


def old_history(directory: Path) -> Path:
    files = {"history.jsonl": [KNOWN_ITEM, JUDGED], "overlap.jsonl": [OVERLAP],
             "uniqueness.jsonl": [UNIQUENESS], "scores.jsonl": [SCORES],
             "daily_queries.jsonl": [DAILY]}
    for name, lines in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text("".join(line + "\n" for line in lines))
    for path, entry in {"latest/finance.json": ENTRY,
                        "runs/finance/20260701T001700Z.json": ENTRY,
                        "runs/legal/20260703T181701Z.json": PENDING}.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(json.dumps(entry, ensure_ascii=False) + "\n")
    return directory


def test_an_older_history_reads_as_typed_rows_and_is_written_back_byte_for_byte(tmp_path):
    before = old_history(tmp_path / "before")
    site = Site.load(before)
    known, judged = site.history
    assert isinstance(known, KnownItemRow) and isinstance(judged, JudgedRow)
    assert (known.metric("recall"), known.metric("mrr")) == (0.5, 0.3055555555555555)
    assert known.groups["bucket"]["filings"].recall == pytest.approx(2 / 3)
    assert judged.metric("ndcg") is None and judged.search_errors == 4
    with pytest.raises(KeyError, match="no metric 'recall'"):
        judged.metric("recall")
    assert site.reports["legal", "20260703T181701Z"].progress == RunProgress(have=1, count=2)
    assert site.in_progress("legal")[0].source == "legal__l.shard-1-of-2.json"
    # a count an older publish did not write sums as none
    end = parse_ts(max(known.ts, judged.ts))
    cell = mean_jaccard(site.overlap, "finance", end)["exa", "keenable"]
    assert (cell["shared_urls"], cell["mean_jaccard"]) == (0, pytest.approx(0.5 / 6))
    assert [view.bench for view in bench_views(site)] == ["news", "finance"]

    after = tmp_path / "after"
    site.write(after)
    for name in ("history.jsonl", "overlap.jsonl", "uniqueness.jsonl", "scores.jsonl",
                 "daily_queries.jsonl", "latest/finance.json",
                 "runs/finance/20260701T001700Z.json", "runs/legal/20260703T181701Z.json"):
        assert (after / name).read_bytes() == (before / name).read_bytes(), name


@pytest.mark.parametrize(("name", "line", "says"), [
    ("history.jsonl", KNOWN_ITEM.replace('"num_scored": 6', '"num_scored": "6"'),
     "history.jsonl:3: not a history row: Expected `int`, got `str` - at `$.num_scored`"),
    ("history.jsonl", JUDGED.replace('"judged"', '"graded"'),
     "history.jsonl:3: not a history row: Invalid value 'graded' - at `$.kind`"),
    ("overlap.jsonl", OVERLAP.replace('"a": "exa", ', ""),
     "overlap.jsonl:2: not a history row: Object missing required field `a`"),
    ("scores.jsonl", SCORES.replace("[0.0, 1.0, null]", '[0.0, "x", null]'),
     "scores.jsonl:2: not a history row: Expected `float | null`, got `str`"),
    ("daily_queries.jsonl", DAILY.replace('"run_id": "20260701T001700Z", ', ""),
     "daily_queries.jsonl:2: not a query row: Object missing required field `run_id`"),
    ("uniqueness.jsonl", UNIQUENESS[:40], "uniqueness.jsonl:2: not JSON"),
])
def test_a_damaged_row_names_its_file_line_and_field(tmp_path, name, line, says):
    history = old_history(tmp_path)
    path = history / name
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(ReportError) as caught:
        Site.load(history)
    assert str(caught.value).startswith(f"{history}/{says}")


def test_a_damaged_run_entry_names_its_file(tmp_path):
    history = old_history(tmp_path)
    path = history / "latest" / "finance.json"
    path.write_text(json.dumps({**ENTRY, "complete": "yes"}))
    with pytest.raises(ReportError, match=r"finance\.json: not a run-report file: Expected "
                                          r"`bool`, got `str` - at `\$\.complete`"):
        Site.load(history)


def test_intervals_read_back_as_written_and_a_damaged_file_is_named(tmp_path):
    history = old_history(tmp_path)
    site = Site.load(history)
    site.refresh()  # the intervals of the scores row's window
    site.write(history)
    again = Site.load(history)
    assert again.ci == site.ci and again.ci is not None
    cell = again.ci.get("finance", "recall", "exa")
    assert cell is not None and cell.point == pytest.approx(1 / 2)  # 0.0 and 1.0 scored
    assert cell.lo is None and cell.note.startswith("not enough runs (1 in the window")
    ci = json.loads((history / "ci.json").read_text())
    ci["benches"]["finance"]["recall"]["exa"]["n_runs"] = "one"
    (history / "ci.json").write_text(json.dumps(ci))
    with pytest.raises(ReportError, match=r"ci\.json: Expected `int`, got `str` - at "
                                          r"`\$\.benches\[\.\.\.\]\[\.\.\.\]\[\.\.\.\]\.n_runs`"):
        Site.load(history)
