"""The search report as Structs (``contract.report``): the folds build them, and the file a
report is written to is byte for byte what Needle wrote before they were Structs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_runs import START, finance_run, news_run

from needle_lib.benches.registry import build_report
from needle_lib.benches.runfiles import finish_run, read_run
from needle_lib.benches.tables import SpooledTables
from needle_lib.contract.report import (
    JudgedEngine,
    JudgedReport,
    KnownItemEngine,
    KnownItemReport,
    built_rows,
    report_fields,
    summary_of,
)

#: Reports written by main before the report became a Struct (``search_runs.news_run``,
#: seed 3, brave failing its first query; ``finance_run``, seed 2).
WRITTEN_BEFORE = Path(__file__).parent / "payloads" / "reports"


@pytest.mark.parametrize("name", ["news-written-by-main.json", "finance-written-by-main.json"])
def test_a_report_written_before_reads_and_writes_back_the_same_bytes(tmp_path, name):
    """Read back and scored again from its cases, an older report is the same file: same
    figures, same key order (the header's fields at the top level, ``by_<group>`` keys)."""
    before = WRITTEN_BEFORE / name
    again = tmp_path / name
    finish_run(again, *read_run(before))
    assert again.read_bytes() == before.read_bytes()


def test_the_same_cases_make_the_same_file_today(tmp_path):
    """The writer as the suite's synthetic runs use it, against the stored files."""
    for path in (news_run(tmp_path, START, seed=3, failing="brave"),
                 finance_run(tmp_path, START, seed=2)):
        stored = WRITTEN_BEFORE / f"{path.name.split('__')[0]}-written-by-main.json"
        assert path.read_bytes() == stored.read_bytes()


def test_the_folds_build_the_union_tagged_on_the_bench_kind():
    header, cases = read_run(WRITTEN_BEFORE / "news-written-by-main.json")
    judged = build_report(header, cases, in_progress=False)
    assert isinstance(judged, JudgedReport) and judged.kind == "judged"
    assert all(isinstance(f, JudgedEngine) for f in judged.engines.values())
    stored = json.loads((WRITTEN_BEFORE / "news-written-by-main.json").read_text())
    assert judged.engines["exa"].mean_ndcg == stored["engines"]["exa"]["mean_ndcg"]
    assert judged.engines["brave"].search_errors == 1
    assert [pair.engines for pair in judged.overlap] == [o["engines"] for o in stored["overlap"]]

    header, cases = read_run(WRITTEN_BEFORE / "finance-written-by-main.json")
    known = build_report(header, cases, in_progress=False)
    assert isinstance(known, KnownItemReport) and known.kind == "known_item"
    exa = known.engines["exa"]
    assert isinstance(exa, KnownItemEngine)
    assert exa.breakdowns.keys() == {key.removeprefix("by_") for key in
                                     json.loads((WRITTEN_BEFORE / "finance-written-by-main.json")
                                                .read_text())["engines"]["exa"]
                                     if key.startswith("by_")}
    assert known.engines["ultimate"].latency is None and exa.latency is not None


def test_the_summary_keeps_the_figures_and_drops_rows_and_cases():
    header, cases = read_run(WRITTEN_BEFORE / "finance-written-by-main.json")
    report = build_report(header, cases, in_progress=False)
    report.cases = cases  # type: ignore[assignment]  # as runfiles.assemble_report sets them
    summary = summary_of(report)
    assert summary.cases is None and report.cases is cases
    assert all(built_rows(f) == [] for f in summary.engines.values())
    assert all(built_rows(f) for f in report.engines.values())
    fields = report_fields(summary)
    assert "cases" not in fields
    assert fields["engines"]["exa"]["recall_at_k"] == report.engines["exa"].recall_at_k


def test_rows_spooled_by_a_run_in_flight_are_not_rows_in_memory():
    from needle_lib.benches.registry import report_fold

    header, cases = read_run(WRITTEN_BEFORE / "news-written-by-main.json")
    tables = SpooledTables()
    try:
        fold = report_fold(header, tables)
        fold.add_query({c["engine"]: c for c in cases if c["query_id"] == cases[0]["query_id"]})
        report = fold.report(in_progress=True)
        with pytest.raises(TypeError, match="in flight"):
            built_rows(report.engines["exa"])
    finally:
        tables.close()
