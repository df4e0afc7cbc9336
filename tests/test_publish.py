"""`needle publish`: history rows recomputed from crafted runs, replacement on republish,
engine families, cluster-bootstrap intervals on known data, malformed input refused with
nothing written, and concurrent publishers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from search_runs import (
    START,
    finance_run,
    header,
    judged_case,
    known_case,
    news_run,
    snapshot,
    write_report,
)

from needle_lib.benches.runfiles import SearchJournal
from needle_lib.cli import main
from needle_lib.continuous.ci import confidence_intervals
from needle_lib.continuous.runs import ReportError, load_run, parse_ts, query_hash
from needle_lib.continuous.store import Site, publish
from needle_lib.contract.history import ScoresRow
from needle_lib.dashboard.search_views import uniqueness_totals
from needle_lib.kernel.journal import journal_path
from needle_lib.metrics.bootstrap import cluster_bootstrap_means
from needle_lib.metrics.overlap import family_uniqueness, pair_sharing
from needle_lib.paths import REPO_ROOT
from needle_lib.search.families import family


def rows(site: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (site / f"{name}.jsonl").open(encoding="utf-8")]


def test_publish_appends_one_row_per_engine_with_recomputed_figures(tmp_path, capsys):
    first = news_run(tmp_path, START, seed=1)
    second = finance_run(tmp_path, START + timedelta(hours=1), seed=2)
    report = json.loads(first.read_text())
    report["engines"]["exa"]["mean_ndcg"] = 0.999  # a stored aggregate is never trusted
    first.write_text(json.dumps(report))
    assert main(["publish", str(first), str(second), "--site", str(tmp_path / "h")]) == 0
    history = rows(tmp_path / "h", "history")
    assert [(r["bench"], r["engine"]) for r in history] == [
        ("news", "exa"), ("news", "exa-instant"), ("news", "brave"), ("news", "ultimate"),
        ("finance", "exa"), ("finance", "keenable"), ("finance", "ultimate")]
    exa = history[0]
    per_query = [q["ndcg"] for q in report["engines"]["exa"]["per_query"]]
    assert exa["ndcg"] == pytest.approx(sum(per_query) / len(per_query)) != 0.999
    assert exa["run_id"] == "20260701T001700Z" and exa["ts"] == "2026-07-01T00:17:00Z"
    assert exa["complete"] is True and exa["k"] == 5 and exa["p50_s"] > 0
    finance = history[4]
    assert set(finance["groups"]) == {"field", "bucket", "syntax", "tier", "freshness"}
    assert finance["groups"]["bucket"].keys() == {"finance", "filings"}
    assert history[-1]["mrr"] is None  # the pooled engine has no rank of its own
    assert len(rows(tmp_path / "h", "overlap")) == 3 + 1  # news pairs + the finance pair
    scores = rows(tmp_path / "h", "scores")
    assert scores[0]["qids"][0] == query_hash("news story 1 number 0")
    assert set(scores[1]["metrics"]) == {"recall", "mrr"}
    assert "added news run 20260701T001700Z" in capsys.readouterr().out
    latest = json.loads((tmp_path / "h" / "latest" / "news.json").read_text())
    assert latest["run_id"] == "20260701T001700Z" and "cases" not in latest["report"]


def test_republishing_a_run_replaces_its_rows(tmp_path, capsys):
    site = tmp_path / "h"
    path = news_run(tmp_path, START, seed=1)
    other = news_run(tmp_path, START + timedelta(hours=1), seed=2)
    assert main(["publish", str(path), str(other), "--site", str(site)]) == 0
    before = rows(site, "history")
    report = json.loads(path.read_text())  # the same run, re-scored: brave now failed on q0
    report["cases"] = [c if (c["engine"], c["query_id"]) != ("brave", "n1-0") else
                       judged_case("n1-0", c["query"], "brave", [], search_error="HTTP 500")
                       for c in report["cases"]]
    path.write_text(json.dumps(report))
    capsys.readouterr()
    assert main(["publish", str(path), "--site", str(site)]) == 0
    assert "replaced news run 20260701T001700Z" in capsys.readouterr().out
    after = rows(site, "history")
    assert len(after) == len(before) == 8
    brave = [r for r in after if r["engine"] == "brave"]
    assert [r["search_errors"] for r in brave] == [1, 0]
    assert len(rows(site, "scores")) == 2 and len(rows(site, "uniqueness")) == 6


def reworked(path: Path, *, drop_cases: int = 0, sample: int | None = None) -> Path:
    """``path``'s run as a ``-k`` subset (its last cases never asked: incomplete) or as a
    ``--sample`` run (complete, but not the bench's full query set)."""
    report = json.loads(path.read_text())
    report["cases"] = report["cases"][:len(report["cases"]) - drop_cases]
    report["header"]["sampling"]["sample"] = sample
    path.write_text(json.dumps(report))
    return path


def latest_run(site: Path) -> str:
    return json.loads((site / "latest" / "news.json").read_text())["run_id"]


def test_a_complete_run_stays_the_latest_until_a_newer_complete_one(tmp_path, monkeypatch):
    """``kernel.latest.takes_view``, as recall's latest view follows it: a later ``-k``
    subset or ``--sample`` run never hides the complete run; the next complete one takes
    its place. The latest run's report is kept for the run browser however many narrower
    runs follow it."""
    monkeypatch.setattr("needle_lib.continuous.store.RUNS_KEPT", 1)
    site = tmp_path / "h"
    hour = timedelta(hours=1)
    complete = load_run(news_run(tmp_path, START, seed=1))
    assert complete.complete
    publish([complete], site)
    subset = load_run(reworked(news_run(tmp_path, START + hour, seed=2), drop_cases=3))
    sampled = load_run(reworked(news_run(tmp_path, START + 2 * hour, seed=3), sample=6))
    assert not subset.complete and sampled.complete
    publish([subset], site)
    publish([sampled], site)
    assert latest_run(site) == complete.run_id
    assert (site / "runs" / "news" / f"{complete.run_id}.json").is_file()
    assert not (site / "runs" / "news" / f"{subset.run_id}.json").exists()  # one kept + latest
    assert len(rows(site, "history")) == 3 * 4  # every run still adds its rows
    newer = load_run(news_run(tmp_path, START + 3 * hour, seed=4))
    publish([newer], site)
    assert latest_run(site) == newer.run_id
    assert sorted(p.stem for p in (site / "runs" / "news").glob("*.json")) == [newer.run_id]


def test_a_latest_run_published_again_as_incomplete_gives_way(tmp_path):
    """The run holding the view is published again cut short: its new report stands for it,
    and the best run kept (the earlier complete one) becomes the latest."""
    site = tmp_path / "h"
    first = news_run(tmp_path, START, seed=1)
    second = news_run(tmp_path, START + timedelta(hours=1), seed=2)
    publish([load_run(second), load_run(first)], site)  # the order given does not matter
    assert latest_run(site) == "20260701T011700Z"
    publish([load_run(reworked(second, drop_cases=2))], site)
    assert latest_run(site) == "20260701T001700Z"


def test_the_same_run_twice_in_one_call_is_refused(tmp_path):
    path = news_run(tmp_path, START, seed=1)
    copy = tmp_path / "copy" / path.name
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    with pytest.raises(ReportError, match="the same run given twice: news run 20260701"):
        publish([load_run(path), load_run(copy)], tmp_path / "h")


def test_uniqueness_counts_engine_families_as_one():
    per_query = [
        {"exa": [("https://a.example/1", True), ("https://shared.example/x", False)],
         "exa-instant": [("https://a.example/1", False), ("https://b.example/2", True)],
         "brave": [("https://shared.example/x/", False), ("https://c.example/3", False)]},
        # exa and exa-instant alone: one family, so the query does not count for them
        {"exa": [("https://solo.example/1", True)], "exa-instant": []},
    ]
    counts = family_uniqueness(per_query, family)
    # a.example/1 is shared only within the exa family: still unique for both
    assert (counts["exa"].unique_urls, counts["exa"].total_urls) == (1, 2)
    assert (counts["exa"].relevant_unique_urls, counts["exa"].relevant_total_urls) == (1, 1)
    assert (counts["exa-instant"].unique_urls, counts["exa-instant"].relevant_unique_urls) \
        == (2, 1)
    assert (counts["exa"].relevant_exclusive_urls,
            counts["exa-instant"].relevant_exclusive_urls) == (1, 1)
    assert (counts["brave"].unique_urls, counts["brave"].num_queries) == (1, 1)
    assert counts["exa"].num_queries == 1
    with_no_families = family_uniqueness(per_query, lambda engine: engine)
    # a.example/1 is now shared with another "family"; the solo query counts instead
    assert (with_no_families["exa"].unique_urls, with_no_families["exa"].num_queries) == (1, 2)
    assert with_no_families["exa-instant"].unique_urls == 1


def test_relevant_unique_is_not_returned_as_relevant_elsewhere_exclusive_not_at_all():
    """NEEDLE's ``relevant_unique_urls``: a relevant URL another family also returned, but
    not as relevant, is still unique; ``relevant_exclusive_urls`` counts only those no
    other family returned at all."""
    per_query = [{
        "exa": [("https://both-good.example/", True), ("https://exa-good.example/", True),
                ("https://nobody-else.example/", True)],
        "brave": [("https://both-good.example", True), ("https://exa-good.example", False),
                  ("https://brave-only.example", False)],
    }]
    counts = family_uniqueness(per_query, family)
    exa, brave = counts["exa"], counts["brave"]
    assert (exa.relevant_total_urls, exa.relevant_unique_urls,
            exa.relevant_exclusive_urls) == (3, 2, 1)
    assert (exa.unique_urls, exa.total_urls) == (1, 3)
    assert (brave.relevant_total_urls, brave.relevant_unique_urls,
            brave.relevant_exclusive_urls) == (1, 0, 0)


def test_uniqueness_rows_from_before_the_exclusive_count_keep_their_meaning(tmp_path):
    """A row published before ``relevant_exclusive_urls`` existed stored that count under
    ``relevant_unique_urls``: read as exclusive, and kept out of the relevant-unique share
    (whose rows record what NEEDLE counts)."""
    cases = [judged_case("q", "query", "exa", [4, 4], urls=["https://p/1", "https://p/2"]),
             judged_case("q", "query", "brave", [0], urls=["https://p/2"])]
    path = write_report(tmp_path, header("news", "judged", ["exa", "brave"], 1, START),
                        cases, START)
    site = tmp_path / "h"
    publish([load_run(path)], site)
    (new,) = [r for r in rows(site, "uniqueness") if r["engine"] == "exa"]
    # p/2 is relevant for exa, returned by brave rated 0: unique, not exclusive
    assert (new["relevant_unique_urls"], new["relevant_exclusive_urls"],
            new["relevant_total_urls"]) == (2, 1, 2)
    old = {key: new[key] for key in ("bench", "ts", "engine", "family", "unique_urls",
                                     "total_urls", "num_queries")}
    old.update(run_id="20260630T231700Z", relevant_unique_urls=5, relevant_total_urls=7)
    with (site / "uniqueness.jsonl").open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(old) + "\n")
    history = Site.load(site)
    totals = uniqueness_totals(history.uniqueness, "news", parse_ts(new["ts"]))["exa"]
    assert totals["relevant_exclusive_urls"] == 1 + 5
    assert totals["relevant_total_urls"] == 2 + 7
    assert (totals["relevant_unique_urls"], totals["relevant_unique_of"]) == (2, 2)
    assert main(["dashboard", "--site", str(site)]) == 0  # an old row still charts


def test_pair_sharing_counts_shared_and_low_rated_urls():
    per_query = [
        {"a": [("https://x/1", 4), ("https://x/2", 1), ("https://x/3", 0)],
         "b": [("https://x/1", 3), ("https://x/2", 2), ("https://x/3", None)]},
        {"a": [("https://y/1", 4)], "b": [("https://y/2", 4)]},
        {"a": [], "b": []},  # nothing returned: no Jaccard, not counted
    ]
    sharing = pair_sharing(per_query)[("a", "b")]
    assert sharing.jaccard_sum == pytest.approx(1.0 + 0.0)
    assert (sharing.num_shared3, sharing.low_shared_urls, sharing.num_suspect,
            sharing.num_queries) == (1, 2, 1, 2)  # x/2 (≤ 2) and x/3 (0, other unrated)


def test_published_uniqueness_uses_families(tmp_path):
    cases = [judged_case("q", "query", "exa", [4, 0], urls=["https://p/1", "https://p/2"]),
             judged_case("q", "query", "exa-instant", [4], urls=["https://p/1"]),
             judged_case("q", "query", "brave", [0], urls=["https://p/2"])]
    path = write_report(tmp_path, header("news", "judged", ["exa", "exa-instant", "brave"], 1,
                                         START), cases, START)
    by_engine = {r.engine: r for r in load_run(path).uniqueness}
    assert (by_engine["exa"].unique_urls, by_engine["exa"].relevant_unique_urls) == (1, 1)
    assert by_engine["exa-instant"].family == "exa"
    assert by_engine["brave"].unique_urls == 0


def test_cluster_bootstrap_on_known_data():
    intervals = cluster_bootstrap_means({
        "constant": [("q1", 0.5), ("q2", 0.5), ("q3", 0.5)],
        "split": [("q1", 0.0), ("q2", 1.0)],
        "one cluster": [("q1", 0.2), ("q1", 0.8)],
    }, resamples=500, seed=3)
    constant, split = intervals["constant"], intervals["split"]
    assert (constant.estimate, constant.low, constant.high) == (0.5, 0.5, 0.5)
    # two clusters drawn with replacement: all-0, all-1 or mixed; the ends are reached
    assert (split.estimate, split.low, split.high) == (0.5, 0.0, 1.0)
    assert intervals["one cluster"] is None  # a single cluster shows no spread


def test_clusters_weigh_by_their_cells():
    """One cluster with three cells at 1 and one with one cell at 0: the point is 3/4, not
    the mean of cluster means (1/2)."""
    interval = cluster_bootstrap_means({"e": [("a", 1), ("a", 1), ("a", 1), ("b", 0)]},
                                       resamples=200)["e"]
    assert interval.estimate == 0.75 and interval.low == 0.0 and interval.high == 1.0


def score_row(run: str, day: int, qids: list[str], values: list[float | None]) -> ScoresRow:
    return ScoresRow(run_id=run, ts=f"2026-07-0{day}T00:17:00Z", bench="finance",
                     kind="known_item", qids=qids, metrics={"recall": {"e": values}})


def test_ci_takes_the_wider_of_query_and_run_clustering():
    # run effects dominate: run r1 hits everything, r2 nothing, r3 half
    scores = [score_row("r1", 1, ["a", "b", "c", "d"], [1, 1, 1, 1]),
              score_row("r2", 2, ["a", "b", "c", "d"], [0, 0, 0, 0]),
              score_row("r3", 3, ["a", "b", "c", "d"], [1, 0, 1, None])]
    entry = confidence_intervals(scores, end=parse_ts("2026-07-03T00:17:00Z"),
                                 resamples=400).get("finance", "recall", "e")
    assert entry is not None and entry.by_query is not None and entry.by_run is not None
    assert entry.point == pytest.approx(6 / 11)
    assert (entry.n_runs, entry.n_queries, entry.n_cells) == (3, 4, 11)
    assert entry.lo == min(entry.by_query[0], entry.by_run[0])
    assert entry.hi == max(entry.by_query[1], entry.by_run[1])
    by_run = entry.by_run[1] - entry.by_run[0]
    by_query = entry.by_query[1] - entry.by_query[0]
    assert by_run > by_query  # the run clustering is the honest (wider) one here
    assert (entry.lo, entry.hi) == tuple(entry.by_run) and entry.note is None


def test_one_run_says_not_enough_runs(tmp_path):
    site = tmp_path / "h"
    assert main(["publish", str(finance_run(tmp_path, START, seed=1)), "--site",
                 str(site)]) == 0
    ci = json.loads((site / "ci.json").read_text())
    entry = ci["benches"]["finance"]["recall"]["exa"]
    assert entry["lo"] is None and entry["hi"] is None and entry["by_query"] is not None
    assert entry["note"].startswith("not enough runs (1 in the window")
    assert ci["runs"] == {"finance": ["20260701T001700Z"]} and ci["window_days"] == 7


def test_scores_keep_a_seven_day_window_history_keeps_everything(tmp_path):
    paths = [finance_run(tmp_path, START + timedelta(days=day), seed=day)
             for day in (0, 3, 8, 9)]
    site = tmp_path / "h"
    assert main(["publish", *map(str, paths), "--site", str(site)]) == 0
    assert {r["run_id"] for r in rows(site, "history")} == {
        "20260701T001700Z", "20260704T001700Z", "20260709T001700Z", "20260710T001700Z"}
    assert [r["run_id"] for r in rows(site, "scores")] == [
        "20260704T001700Z", "20260709T001700Z", "20260710T001700Z"]
    ci = json.loads((site / "ci.json").read_text())
    assert ci["window_end"] == "2026-07-10T00:17:00Z"
    assert ci["benches"]["finance"]["recall"]["exa"]["n_runs"] == 3


def test_a_journal_of_a_run_in_flight_is_published_as_incomplete(tmp_path):
    head = header("finance", "known_item", ["exa", "keenable"], 2, START)
    report = tmp_path / "finance__finance__20260701-001700.json"
    journal = SearchJournal(journal_path(report), head)
    journal.append(known_case("f0", "company 0 ceo", "exa", 1))
    journal.close(remove=False)
    run = load_run(journal_path(report))
    assert run.complete is False and run.history[0].complete is False


def test_started_at_falls_back_to_the_file_stamp(tmp_path):
    path = finance_run(tmp_path, START, seed=1)
    report = json.loads(path.read_text())
    del report["header"]["started_at"]
    path.write_text(json.dumps(report))
    assert load_run(path).run_id == "20260701T001700Z"
    unstamped = tmp_path / "finance.json"
    unstamped.write_text(json.dumps(report))
    with pytest.raises(ReportError, match="cannot tell when this run started"):
        load_run(unstamped)


@pytest.mark.parametrize("damage, message", [
    (lambda r: r["header"].pop("engines"),
     r"missing required field `engines` - at `\$\.header`"),
    (lambda r: r["cases"][2]["results"][1].pop("url"),
     r"missing required field `url` - at `\$\.cases\[2\]\.results\[1\]`"),
    (lambda r: r["cases"][0].__setitem__("engine", 7),
     r"Expected `str`, got `int` - at `\$\.cases\[0\]\.engine`"),
    (lambda r: r["header"].__setitem__("bench", "nope"), "unknown search bench 'nope'"),
    (lambda r: r.pop("cases"), "not a Needle search report"),
    (lambda r: r["header"].__setitem__("started_at", "yesterday"), "not an ISO time"),
])
def test_malformed_report_is_refused_and_nothing_is_written(tmp_path, capsys, damage, message):
    site = tmp_path / "h"
    good = news_run(tmp_path, START, seed=1)
    assert main(["publish", str(good), "--site", str(site)]) == 0
    before = snapshot(site)
    bad = news_run(tmp_path, START + timedelta(hours=1), seed=2)
    report = json.loads(bad.read_text())
    damage(report)
    bad.write_text(json.dumps(report))
    other = news_run(tmp_path, START + timedelta(hours=2), seed=3)
    capsys.readouterr()
    assert main(["publish", str(other), str(bad), "--site", str(site)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err
    assert re.search(message, err), err
    assert snapshot(site) == before  # not even the good report of the same call


def test_unreadable_files_are_named(tmp_path, capsys):
    broken = tmp_path / "news__q__20260701-001700.json"
    broken.write_text('{"header": ')
    assert main(["publish", str(broken), "--site", str(tmp_path / "h")]) == 2
    assert f"{broken}: cannot read search report" in capsys.readouterr().err
    assert not (tmp_path / "h").exists()


def test_a_damaged_history_is_not_extended(tmp_path, capsys):
    site = tmp_path / "h"
    assert main(["publish", str(news_run(tmp_path, START, seed=1)), "--site", str(site)]) == 0
    with (site / "history.jsonl").open("a") as fh:
        fh.write("{not json\n")
    before = snapshot(site)
    later = news_run(tmp_path, START + timedelta(hours=1), seed=2)
    assert main(["publish", str(later), "--site", str(site)]) == 2
    assert "history.jsonl:5: not JSON" in capsys.readouterr().err
    assert snapshot(site) == before


def test_concurrent_publishers_all_land(tmp_path):
    """Four processes publish four runs into one directory at once: the lock serialises
    their read-modify-write, so every run's rows are there and every file parses."""
    paths = [news_run(tmp_path, START + timedelta(hours=h), seed=h) for h in range(4)]
    site = tmp_path / "h"
    procs = [subprocess.Popen([sys.executable, "-m", "needle_lib.cli", "publish", str(p),
                               "--site", str(site)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for p in paths]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    assert {r["run_id"] for r in rows(site, "history")} == {
        f"20260701T0{h}1700Z" for h in range(4)}
    assert len(rows(site, "history")) == 16 and len(rows(site, "scores")) == 4
    loaded = Site.load(site)
    assert loaded.ci is not None
    assert len(loaded.ci.runs["news"]) == 4  # the last writer saw every run
    assert not [p for p in site.iterdir() if p.name.endswith(".tmp")]


def test_summary_appends_markdown_tables(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("## runs\n")
    path = finance_run(tmp_path, START, seed=1)
    assert main(["publish", str(path), "--site", str(tmp_path / "h"), "--summary",
                 str(summary)]) == 0
    text = summary.read_text()
    assert text.startswith("## runs\n### finance · run 20260701T001700Z (complete)")
    assert "recall@5" in text and "keenable" in text and "ultimate" in text


class Interrupted(Exception):
    """Stands for the process dying mid-publish (a kill, a full disk, a CI timeout)."""


@pytest.mark.parametrize("republish", [False, True], ids=["new-run", "republished-run"])
def test_an_interrupted_publish_never_leaves_rows_without_their_report(
        tmp_path, monkeypatch, republish):
    """Issue 32 item 6: a publish killed after writing history rows left the run without
    its kept report, and its run page empty. Reports are written before the rows that
    refer to them (and a re-published run's report is rewritten in place, not unlinked
    first), so a publish that dies at its first report write leaves no such rows."""
    site = tmp_path / "h"
    first = news_run(tmp_path, START, seed=1)
    assert main(["publish", str(first), "--site", str(site)]) == 0
    second = first if republish else news_run(tmp_path, START + timedelta(hours=1), seed=2)
    from needle_lib.continuous import store

    real = store.write_json_atomic

    def dies_at_a_kept_report(path, data, **how):
        if path.parent.parent.name == store.RUNS:
            raise Interrupted(path)
        real(path, data, **how)

    monkeypatch.setattr(store, "write_json_atomic", dies_at_a_kept_report)
    with pytest.raises(Interrupted):
        main(["publish", str(second), "--site", str(site)])
    monkeypatch.undo()
    for bench, run_id in {(r["bench"], r["run_id"]) for r in rows(site, "history")}:
        assert (site / "runs" / bench / f"{run_id}.json").is_file(), run_id
    assert Site.load(site).orphans() == []


def test_rows_without_a_report_are_reported_and_a_republish_repairs_them(tmp_path, capsys):
    """A history an interrupted publish of an earlier version left behind: `needle publish`
    and `needle dashboard` name the run and the fix, the run page says the report is
    missing (not an empty page), and publishing the report again repairs it."""
    site = tmp_path / "h"
    first = news_run(tmp_path, START, seed=1)
    second = news_run(tmp_path, START + timedelta(hours=1), seed=2)
    assert main(["publish", str(first), "--site", str(site)]) == 0
    (site / "runs" / "news" / "20260701T001700Z.json").unlink()  # the damage
    capsys.readouterr()
    assert main(["publish", str(second), "--site", str(site)]) == 0
    err = capsys.readouterr().err
    assert "warning: news run 20260701T001700Z: its report is missing from the history" in err
    assert "needle publish REPORT --site DIR" in err
    assert main(["dashboard", "--site", str(site)]) == 0
    assert "note: news run 20260701T001700Z: its report is missing" in capsys.readouterr().out
    page = (site / "dashboard" / "search" / "news" / "runs" / "20260701T001700Z.html")
    assert "judgements cannot be shown: its report is missing" in page.read_text()
    assert main(["publish", str(first), "--site", str(site)]) == 0
    assert "missing" not in capsys.readouterr().err
    assert Site.load(site).orphans() == []
