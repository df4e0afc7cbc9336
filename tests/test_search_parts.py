"""Shard parts of one search run (``--shard I/N`` on several machines) are one run on the
dashboard: grouped by the shard their headers record, merged, incomplete while a part is
missing, and never a separate "latest" run."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from browser import dom_text
from search_runs import START, header, known_case, snapshot

from needle_lib.benches.run_reports import SearchReports
from needle_lib.benches.runfiles import SearchJournal, finish_run, read_run
from needle_lib.cli import main
from needle_lib.commands.publish import load_runs
from needle_lib.continuous import store
from needle_lib.continuous.parts import PARTS, PartInfo, group_parts, merged_name, part_info
from needle_lib.continuous.runs import iso
from needle_lib.continuous.store import Site
from needle_lib.contract.history import RunProgress
from needle_lib.contract.outcome import Outcome
from needle_lib.kernel.journal import journal_path

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
                    (START + timedelta(minutes=minutes)).isoformat(),
                    header("legal", "known_item", ENGINES, 6, START))


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
    runs = load_runs(paths)
    assert len(runs) == 1 and runs[0].complete
    assert runs[0].report["num_queries"] == 6
    assert runs[0].report["engines"]["exa"]["recall_at_k"] == 3 / 6
    assert runs[0].ts == iso(START)  # the run started when its first part did
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_a_run_with_a_part_missing_is_in_progress_not_the_latest_run(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    complete = load_runs([part(tmp_path / "a", 1, -60 * 24, (0, 1, 2)),
                          part(tmp_path / "a", 2, -60 * 24 + 2, (3, 4, 5))])
    in_progress = load_runs([part(tmp_path / "b", 1, 0, (0, 1, 2))])
    assert [r.state for r in complete + in_progress] == ["complete",
                                                         "in progress, 1 of 2 parts"]
    site = Site.of_runs(complete + in_progress)
    assert {r.run_id for r in site.history} == {complete[0].run_id}  # no figures yet
    assert site.latest["legal"].run_id == complete[0].run_id
    assert [e.run_id for e in site.in_progress("legal")] == [in_progress[0].run_id]


def test_a_sharded_search_run_records_its_shard_in_the_header(tmp_path):
    shard = {"index": 2, "count": 3, "by": "query"}
    reports = SearchReports(tmp_path, None, part=".shard-2-of-3", shard=shard)
    head = header("legal", "known_item", ENGINES, 6, START)
    case = known_case("l0", "case law 0", "exa", 1)
    reports.add({"kind": "known_item", "pair": "legal__legal", "header": head, "case": case},
                Outcome.PASSED)
    recorded = reports.headers["legal__legal"]
    assert recorded["shard"] == shard
    assert part_info(tmp_path / "r.json", recorded) is not None
    reports.live["legal__legal"].journal.close(remove=True)


# --- parts published by separate `needle publish` calls (a CI matrix's jobs) -------------

def publish_cli(site: Path, *paths: Path) -> int:
    return main(["publish", *map(str, paths), "--site", str(site)])


def published(site: Path) -> dict[str, bytes]:
    """Every file of a history but the raw parts it keeps and its lock."""
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and p.relative_to(site).parts[0] not in (PARTS, ".publish.lock")}


def machines(tmp_path: Path) -> list[Path]:
    """Each shard part on its own machine (its own results directory)."""
    paths = []
    for index, minutes, queries in ((1, 0, (0, 1, 2)), (2, 3, (3, 4, 5))):
        (tmp_path / f"m{index}").mkdir()
        paths.append(part(tmp_path / f"m{index}", index, minutes, queries))
    return paths


@pytest.mark.parametrize("order", [(1, 2), (2, 1)])
def test_parts_published_one_by_one_equal_needle_merge_then_one_publish(tmp_path, order,
                                                                       capsys):
    paths = machines(tmp_path)
    site = tmp_path / "history"
    for index in order:
        assert publish_cli(site, paths[index - 1]) == 0
    merged = tmp_path / "merged" / merged_name(paths[0])
    assert main(["merge", *map(str, paths), "--out", str(merged)]) == 0
    assert publish_cli(tmp_path / "whole", merged) == 0
    assert published(site) == published(tmp_path / "whole")
    history = Site.load(site)
    assert {r.run_id for r in history.history} == {"20260701T001700Z"}
    assert history.latest["legal"].complete is True and not history.in_progress("legal")
    assert sorted(p.name for p in (site / PARTS / "legal").iterdir()) == sorted(
        p.name for p in paths)  # the raw parts stay, so a re-publish merges again


def test_a_run_with_parts_missing_is_in_progress_in_the_history(tmp_path, capsys):
    site = tmp_path / "history"
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    whole = [part(earlier, 1, -60 * 24, (0, 1, 2)), part(earlier, 2, -60 * 24, (3, 4, 5))]
    assert publish_cli(site, *whole) == 0
    before = Site.load(site)
    paths = machines(tmp_path)
    capsys.readouterr()
    assert publish_cli(site, paths[1]) == 0
    assert "(in progress, 1 of 2 parts)" in capsys.readouterr().out
    history = Site.load(site)
    # no rows, no intervals, not the latest run: the standings are the finished run's alone
    for name in ("history", "overlap", "uniqueness", "scores", "ci", "latest"):
        assert getattr(history, name) == getattr(before, name), name
    (pending,) = history.in_progress("legal")
    assert pending.progress == RunProgress(have=1, count=2)
    assert pending.run_id == "20260701T002000Z"  # part 2's start, until part 1 lands
    assert publish_cli(site, paths[0]) == 0  # the run now starts with part 1: one run
    history = Site.load(site)
    assert {r.run_id for r in history.history} == {"20260630T001700Z", "20260701T001700Z"}
    assert not history.in_progress("legal") and ("legal", "20260701T002000Z") not in \
        history.reports
    assert not (site / "runs" / "legal" / "20260701T002000Z.json").exists()


def test_a_matrix_publishing_its_parts_at_once_lands_one_run(tmp_path, capsys):
    """Two jobs publish their parts into one history at the same moment: the publish lock
    (a flock per open, so threads contend as processes do) serialises them, and whichever
    lands second finds the first's part and merges."""
    paths = machines(tmp_path)
    site = tmp_path / "history"
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(lambda path: publish_cli(site, path), paths)) == [0, 0]
    history = Site.load(site)
    assert {r.run_id for r in history.history} == {"20260701T001700Z"}
    assert history.latest["legal"].complete is True and len(history.reports) == 1


def test_publishing_the_same_part_twice_changes_nothing(tmp_path, capsys):
    paths = machines(tmp_path)
    site = tmp_path / "history"
    for path in paths:
        assert publish_cli(site, path) == 0
        once = snapshot(site)
        assert publish_cli(site, path) == 0
        assert snapshot(site) == once
    assert len(Site.load(site).reports) == 1


def test_a_part_of_another_setup_under_the_same_run_is_refused(tmp_path, capsys):
    paths = machines(tmp_path)
    site = tmp_path / "history"
    assert publish_cli(site, paths[0]) == 0
    before = snapshot(site)
    report = json.loads(paths[1].read_text())
    report["header"]["num_results"] = 10
    paths[1].write_text(json.dumps(report))
    capsys.readouterr()
    assert publish_cli(site, paths[1]) == 2
    err = capsys.readouterr().err
    assert f"{paths[1]}: part 2 of 2 of legal run 20260701T001700Z comes from a different " \
           "setup" in err
    assert "num_results: 5" in err and "10" in err
    assert snapshot(site) == before


def test_a_part_of_a_finished_run_whose_parts_are_gone_is_refused(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.setattr(store, "RUNS_KEPT", 1)  # each bench keeps its newest run's parts
    paths = machines(tmp_path)
    site = tmp_path / "history"
    assert publish_cli(site, *paths) == 0
    later = tmp_path / "later"
    later.mkdir()
    assert publish_cli(site, part(later, 1, 60 * 24, (0, 1, 2)),
                       part(later, 2, 60 * 24, (3, 4, 5))) == 0
    assert sorted(p.name for p in (site / PARTS / "legal").iterdir()) == [
        "legal__legal__20260702-001700.shard-1-of-2.json",
        "legal__legal__20260702-001700.shard-2-of-2.json"]
    before = snapshot(site)
    capsys.readouterr()
    assert publish_cli(site, paths[0]) == 2
    assert "legal run 20260701T001700Z is published as a finished run" in \
        capsys.readouterr().err
    assert snapshot(site) == before


def test_a_parts_journal_is_replaced_by_its_final_report(tmp_path, capsys):
    paths = machines(tmp_path)
    header_, cases = read_run(paths[1])
    journal = journal_path(paths[1])
    log = SearchJournal(journal, header_)
    log.append(cases[0])
    log.close(remove=False)
    site = tmp_path / "history"
    assert publish_cli(site, paths[0], journal) == 0
    assert Site.load(site).latest["legal"].complete is False  # a part still in flight
    assert publish_cli(site, paths[1]) == 0
    assert sorted(p.name for p in (site / PARTS / "legal").iterdir()) == sorted(
        p.name for p in paths)
    assert Site.load(site).latest["legal"].complete is True


def page_text(html: str) -> str:
    """What a reader sees of a page's markup (tags dropped, spaces folded)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_search_pages_show_a_run_in_progress_as_one_run(tmp_path, capsys):
    """`needle dashboard --site`: the latest-run page as Chromium renders it (its browser
    is script-driven), and the run list and index as written."""
    site = tmp_path / "history"
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    assert publish_cli(site, part(earlier, 1, -60 * 24, (0, 1, 2)),
                       part(earlier, 2, -60 * 24, (3, 4, 5))) == 0
    assert publish_cli(site, machines(tmp_path)[0]) == 0
    out = tmp_path / "pages"
    assert main(["dashboard", "--site", str(site), "--out", str(out)]) == 0
    latest = page_text(dom_text(out / "search" / "legal" / "latest.html", tmp_path))
    assert "Run 20260701T001700Z (2026-07-01T00:17:00Z) is in progress, 1 of 2 parts " \
           "published" in latest
    assert "Run 20260630T001700Z (2026-06-30T00:17:00Z), legal__legal__20260630-001700.json," \
           " complete" in latest
    runs = page_text((out / "search" / "legal" / "runs.html").read_text())
    assert "2 run(s)" in runs and "20260701T001700Z 2026-07-01T00:17:00Z in progress, 1 of " \
           "2 parts" in runs
    assert not (out / "search" / "legal" / "runs" / "20260701T001700Z.html").exists()
    index = page_text((out / "index.html").read_text())
    assert "run 2026-07-01T00:17:00Z: in progress, 1 of 2 parts" in index
    leaderboard = page_text((out / "search" / "legal" / "leaderboard.html").read_text())
    assert "1 run(s) in the last 7 days (of 1 in the history)" in leaderboard


def test_the_dashboard_of_reports_shows_a_lone_part_as_a_run_in_progress(tmp_path, capsys):
    """`needle dashboard --report PART`: a bench with no finished run yet still says its
    run is in progress (there are no figures to give it pages)."""
    out = tmp_path / "pages"
    assert main(["dashboard", "--report", str(machines(tmp_path)[1]), "--out",
                 str(out)]) == 0
    index = page_text((out / "index.html").read_text())
    assert "No finished search runs in legal__legal__20260701-002000.shard-2-of-2.json" in index
    assert "legal Run 20260701T002000Z (2026-07-01T00:20:00Z) is in progress, 1 of 2 parts " \
           "published" in index
