"""One clock for the moment a run is for: NEEDLE_NOW pins it, nothing else reads the date."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

import needle_lib
from needle_lib.clock import NOW_ENV, utc_now, utc_today
from needle_lib.tomlconf import ConfigError

# Modules that read the wall clock on purpose: they measure or stamp real time, not the
# moment queries are drawn or judged for.
REAL_TIME_READERS = {
    "clock.py": "the one source of the run's moment",
    "net/retry.py": "a Retry-After date counts down on the real clock",
    "benches/run_reports.py": "a report's start time is when it really ran",
    "recall/store.py": "a run file is named by when the run really started",
}
WALL_CLOCK = re.compile(r"datetime\.(now|utcnow|today)\(|date\.today\(")


def test_a_pinned_moment_is_read_in_utc(monkeypatch):
    monkeypatch.setenv(NOW_ENV, "2028-02-29T23:30:00-02:00")
    assert utc_now() == datetime(2028, 3, 1, 1, 30, tzinfo=UTC)
    assert utc_today().isoformat() == "2028-03-01"


def test_a_pinned_moment_without_a_zone_is_utc(monkeypatch):
    monkeypatch.setenv(NOW_ENV, "2026-12-31 21:30")
    assert utc_now() == datetime(2026, 12, 31, 21, 30, tzinfo=UTC)


def test_unpinned_reads_the_wall_clock(monkeypatch):
    monkeypatch.delenv(NOW_ENV)
    before = datetime.now(UTC)
    assert before <= utc_now() <= datetime.now(UTC)


def test_a_malformed_moment_names_the_variable(monkeypatch):
    monkeypatch.setenv(NOW_ENV, "yesterday")
    with pytest.raises(ConfigError, match=r"NEEDLE_NOW='yesterday' is not an ISO 8601 time"):
        utc_now()


def test_only_the_clock_module_reads_the_date():
    root = Path(needle_lib.__file__).parent
    readers = {path.relative_to(root).as_posix() for path in root.rglob("*.py")
               if WALL_CLOCK.search(path.read_text(encoding="utf-8"))}
    assert readers <= set(REAL_TIME_READERS), (
        f"{sorted(readers - set(REAL_TIME_READERS))} read the wall clock directly; "
        "use needle_lib.clock.utc_now() so NEEDLE_NOW pins the moment")


def test_tests_read_the_pinned_moment_not_the_wall_clock():
    here = Path(__file__).parent
    on_purpose = {"test_clock.py": "checks the unpinned path",
                  "test_search_retry.py": "a Retry-After date is on the real clock"}
    readers = {path.name for path in here.rglob("*.py")
               if WALL_CLOCK.search(path.read_text(encoding="utf-8"))}
    assert readers <= set(on_purpose), (
        f"{sorted(readers - set(on_purpose))} read the wall clock; use the pinned_clock "
        "fixture (NEEDLE_NOW) or a fixed datetime so the outcome cannot depend on the hour")


# --- what a report records of the moment (issue 32, item 9) -------------------------------

def test_a_report_records_the_pinned_moment_and_the_judges_today(monkeypatch):
    from needle_lib.clock import clock_record

    monkeypatch.setenv(NOW_ENV, "2025-12-31T23:30:00-02:00")
    assert clock_record() == {"pinned": "2026-01-01T01:30:00+00:00",
                              "now": "2026-01-01T01:30:00+00:00", "judge_today": "2026-01-01"}
    monkeypatch.delenv(NOW_ENV)
    free = clock_record()
    assert free["pinned"] is None and free["judge_today"] == utc_today().isoformat()


def test_the_search_report_header_carries_the_clock_from_session_start(monkeypatch, tmp_path):
    from needle_lib.benches.run_reports import SearchReports

    monkeypatch.setenv(NOW_ENV, "2024-02-29T12:00:00Z")
    reports = SearchReports(tmp_path, None)
    reports.start_clock()
    monkeypatch.setenv(NOW_ENV, "2030-01-01T00:00:00Z")  # a later change does not move it
    header = {"bench": "news", "kind": "judged", "engines": ["exa"], "num_results": 5,
              "expected_cases": 1}
    reports.add({"kind": "judged", "pair": "news__q", "header": header,
                 "case": {"query_id": "q", "query": "boots", "engine": "exa", "results": []}},
                "skipped")
    assert reports.headers["news__q"]["clock"] == {
        "pinned": "2024-02-29T12:00:00+00:00", "now": "2024-02-29T12:00:00+00:00",
        "judge_today": "2024-02-29"}
    for live in reports.live.values():
        live.journal.close(remove=True)


def test_recall_reads_no_clock_so_its_dump_records_none():
    """A recall prompt, its targets and its scoring never depend on the date: the clock
    matters only where queries are drawn or judged, and only those reports record it."""
    root = Path(needle_lib.__file__).parent
    readers = [path for part in ("recall", "plugin/recall") for path in (root / part).rglob("*.py")
               if "needle_lib.clock" in path.read_text(encoding="utf-8")]
    assert readers == []
