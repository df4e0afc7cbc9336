"""Shard parts of one search run (``--shard I/N`` on several machines) are one run on the
dashboard: grouped by the shard their headers record, merged, incomplete while a part is
missing, and never a separate "latest" run."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from search_runs import START, header, known_case

from needle_lib.benches.runfiles import finish_run
from needle_lib.commands.publish import load_runs
from needle_lib.continuous.parts import PartInfo, group_parts, part_info
from needle_lib.continuous.runs import iso
from needle_lib.continuous.store import Site
from needle_lib.contract.outcome import Outcome
from needle_lib.plugin.search.reports import SearchReports

ENGINES = ["exa", "keenable"]


def part(directory: Path, index: int, started_minutes: int, queries: tuple[int, ...],
         sha: str = "0" * 64) -> Path:
    """Part ``index`` of 2, started ``started_minutes`` after START on its own machine
    (its own stamp in the file name)."""
    started = START + timedelta(minutes=started_minutes)
    head = {**header("legal", "known_item", ENGINES, 6, started), "bench": "legal",
            "shard": {"index": index, "count": 2, "by": "query"}}
    head["queries"] = {**head["queries"], "sha256": sha}
    cases = [known_case(f"l{q}", f"case law {q}", e, 1 if q % 2 else None)
             for q in queries for e in ENGINES]
    path = directory / f"legal__legal__{started:%Y%m%d-%H%M%S}.shard-{index}-of-2.json"
    finish_run(path, head, cases)
    return path


def info(index: int, minutes: int, sha: str = "a") -> PartInfo:
    return PartInfo(Path(f"p{index}-{minutes}"), "legal", sha, index, 2,
                    (START + timedelta(minutes=minutes)).isoformat())


def test_parts_group_by_header_not_by_name():
    groups = group_parts([info(2, 4), info(1, 0), info(1, 60 * 24), info(2, 60 * 24 + 3)])
    assert [[p.path.name for p in g] for g in groups] == [["p1-0", "p2-4"],
                                                          ["p1-1440", "p2-1443"]]


def test_a_share_run_twice_or_another_query_file_is_another_run():
    again = group_parts([info(1, 0), info(1, 5), info(2, 6)])
    assert [[p.index for p in g] for g in again] == [[1, 2], [1]]
    other = group_parts([info(1, 0, "a"), info(2, 1, "b")])
    assert len(other) == 2


def test_a_whole_run_is_not_a_part(tmp_path):
    head = header("legal", "known_item", ENGINES, 6, START)
    assert part_info(tmp_path / "r.json", head) is None
    assert part_info(tmp_path / "r.json", {**head, "shard": {"index": 1, "count": 2}}) \
        is not None


def test_parts_of_two_machines_are_one_merged_run(tmp_path):
    paths = [part(tmp_path, 1, 0, (0, 1, 2)), part(tmp_path, 2, 3, (3, 4, 5))]
    assert paths[0].name.split("__")[-1] != paths[1].name.split("__")[-1]
    runs = load_runs(paths, write_merged=False)
    assert len(runs) == 1 and runs[0].complete
    assert runs[0].report["num_queries"] == 6
    assert runs[0].report["engines"]["exa"]["recall_at_k"] == 3 / 6
    assert runs[0].ts == iso(START)  # the run started when its first part did
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_a_run_with_a_part_missing_is_one_incomplete_run_not_the_latest_complete(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    complete = load_runs([part(tmp_path / "a", 1, -60 * 24, (0, 1, 2)),
                          part(tmp_path / "a", 2, -60 * 24 + 2, (3, 4, 5))],
                         write_merged=False)
    in_progress = load_runs([part(tmp_path / "b", 1, 0, (0, 1, 2))], write_merged=False)
    assert [r.complete for r in complete + in_progress] == [True, False]
    site = Site.of_runs(complete + in_progress)
    assert len({r["run_id"] for r in site.history}) == 2
    assert site.latest["legal"]["complete"] is False  # shown as incomplete, never complete


def test_a_sharded_search_run_records_its_shard_in_the_header(tmp_path):
    shard = {"index": 2, "count": 3, "by": "query"}
    reports = SearchReports(tmp_path, None, part=".shard-2-of-3", shard=shard)
    head = header("legal", "known_item", ENGINES, 6, START)
    case = known_case("l0", "case law 0", "exa", 1)
    reports.add({"kind": "search", "pair": "legal__legal", "header": head, "case": case},
                Outcome.PASSED)
    recorded = reports.headers["legal__legal"]
    assert recorded["shard"] == shard
    assert part_info(tmp_path / "r.json", recorded) is not None
    reports.journals["legal__legal"].close(remove=True)
