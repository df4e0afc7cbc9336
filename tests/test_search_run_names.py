"""Every search run gets its own report name, even two started in the same second."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from search_runs import START, header, judged_case

from needle_lib.benches.runfiles import finish_run, reserve_run_path
from needle_lib.kernel.journal import journal_path


def test_runs_in_the_same_second_get_distinct_report_names(tmp_path):
    wanted = tmp_path / "search" / "news__q__20260701-001700.json"
    with ThreadPoolExecutor(4) as pool:
        names = list(pool.map(lambda _: reserve_run_path(wanted), range(4)))
    assert len(set(names)) == 4 and wanted in names
    assert all(journal_path(name).exists() for name in names)  # each held until written


def test_a_finished_report_keeps_its_name(tmp_path):
    wanted = tmp_path / "news__q__20260701-001700.json"
    first = reserve_run_path(wanted)
    finish_run(first, header("news", "judged", ["exa"], 1, START),
               [judged_case("q0", "query", "exa", [3])])
    journal_path(first).unlink()  # as the controller does once the report is written
    assert reserve_run_path(wanted) == wanted.with_name("news__q__20260701-001700-2.json")
