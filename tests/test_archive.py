"""The run archive and the 24-hour query window: `needle publish --hub` against a loopback
hub that speaks the upload API huggingface_hub uses (preupload, NDJSON commit, paged tree),
idempotent re-publishing, retries through the shared policy, `--backfill`, and the
one-line answers when the token or the extra is missing."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from search_runs import START, finance_run, news_run

from needle_lib.benches.queries import file_sha256
from needle_lib.cli import main
from needle_lib.continuous.daily import DAILY_FILE
from needle_lib.continuous.runs import load_run
from needle_lib.extras import require_extra
from needle_lib.net.retry import RetryPolicy
from needle_lib.testing.hub_server import FakeHubServer
from needle_lib.tomlconf import ConfigError

REPO = "org/bench-archive"


@pytest.fixture
def hub(monkeypatch):
    pytest.importorskip("huggingface_hub", reason="needs the hub extra: uv sync --extra hub")
    with FakeHubServer(page_size=2) as server:  # tiny pages: the client must follow Link
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", "hf_test_token")
        yield server


def archived(hub: FakeHubServer) -> dict[str, bytes]:
    return {path: data for (kind, repo, path), data in hub.files.items()
            if (kind, repo) == ("dataset", REPO)}


def with_query_file(directory: Path, report: Path) -> Path:
    """Write the run's query file beside its report, as a run directory holds it."""
    data = json.loads(report.read_text())
    rows = {c["query_id"]: c["query"] for c in data["cases"]}
    path = directory / Path(data["header"]["queries"]["path"]).name
    path.write_text("".join(json.dumps({"query_id": q, "query_text": t,
                                        "query_origin": {"source": "rss", "feed": "bbc"}}) + "\n"
                            for q, t in rows.items()))
    data["header"]["queries"]["sha256"] = file_sha256(path)  # as the run recorded it
    report.write_text(json.dumps(data))
    return path


def _run_dir(root: Path, number: int) -> Path:
    path = root / f"run{number}"
    path.mkdir()
    return path


def test_publish_archives_every_artifact_and_the_query_window(hub, tmp_path, capsys):
    first = news_run(tmp_path, START, seed=1)
    with_query_file(tmp_path, first)
    (tmp_path / "news.html").write_text("<html>report</html>")
    (tmp_path / "news.cases.html").write_text("<html>each case's results</html>")
    second = finance_run(tmp_path, START + timedelta(hours=1), seed=2)
    assert main(["publish", str(first), str(second), "--site", str(tmp_path / "h"),
                 "--hub", REPO]) == 0
    files = archived(hub)
    assert set(files) == {
        f"runs/news/20260701T001700Z/{first.name}", "runs/news/20260701T001700Z/news.jsonl",
        "runs/news/20260701T001700Z/news.html", "runs/news/20260701T001700Z/news.cases.html",
        f"runs/finance/20260701T011700Z/{second.name}",
        DAILY_FILE}
    assert files[f"runs/news/20260701T001700Z/{first.name}"] == first.read_bytes()
    window = [json.loads(line) for line in files[DAILY_FILE].splitlines()]
    news = [r for r in window if r["bench"] == "news"]
    assert len(news) == 6 and news[0]["query_origin"] == {"source": "rss", "feed": "bbc"}
    assert {r["bench"] for r in window} == {"news", "finance"}
    assert (tmp_path / "h" / DAILY_FILE).read_bytes() == files[DAILY_FILE]
    assert hub.authorization == {"Bearer hf_test_token"}
    assert "archive → org/bench-archive: 6 file(s)" in capsys.readouterr().out


def test_republishing_replaces_only_that_runs_files(hub, tmp_path):
    run, other = (news_run(directory, START + timedelta(hours=hour), seed=hour + 1)
                  for hour, directory in ((0, _run_dir(tmp_path, 1)), (1, _run_dir(tmp_path, 2))))
    stale = with_query_file(run.parent, run)  # each run directory holds its own query file
    assert main(["publish", str(run), str(other), "--site", str(tmp_path / "h"),
                 "--hub", REPO]) == 0
    before = archived(hub)
    stale.unlink()  # the run is published again without its query file
    assert main(["publish", str(run), "--site", str(tmp_path / "h"), "--hub", REPO]) == 0
    after = archived(hub)
    assert f"runs/news/20260701T001700Z/{stale.name}" not in after
    others = {p: d for p, d in before.items() if p.startswith("runs/news/20260701T011700Z/")}
    assert others and all(after[p] == d for p, d in others.items())
    assert hub.commits[-1]["paths"][-1] == f"-runs/news/20260701T001700Z/{stale.name}"


def test_hub_errors_are_retried_with_the_shared_policy(hub, tmp_path, monkeypatch):
    from needle_lib.continuous.archive import Archive

    hub.fail_commits = 2
    waits: list[float] = []
    archive = Archive(REPO, policy=RetryPolicy(attempts=3), sleep=waits.append)
    uploaded = archive.upload([load_run(news_run(tmp_path, START, seed=1))], "")
    assert waits == [0.0, 0.0]  # the hub's Retry-After: 0, twice, then the commit landed
    assert uploaded.commit == hub.commits[-1]["oid"]
    hub.fail_commits = 5
    with pytest.raises(ConfigError, match=r"hub commit for org/bench-archive failed after 3 "
                                          r"attempt\(s\): HTTP 503"):
        Archive(REPO, policy=RetryPolicy(attempts=3), sleep=waits.append).upload(
            [load_run(news_run(tmp_path, START + timedelta(hours=1), seed=2))], "")


def test_backfill_rebuilds_history_and_window_from_the_archive(hub, tmp_path):
    reports = [news_run(_run_dir(tmp_path, h), START + timedelta(hours=h), seed=h)
               for h in (0, 12, 30)]
    for report in reports:
        with_query_file(report.parent, report)
    assert main(["publish", *map(str, reports), "--site", str(tmp_path / "h"),
                 "--hub", REPO]) == 0
    assert main(["publish", "--backfill", "--site", str(tmp_path / "again"), "--hub",
                 REPO]) == 0
    for name in ("history.jsonl", "overlap.jsonl", "uniqueness.jsonl", DAILY_FILE):
        assert (tmp_path / "again" / name).read_text() == (tmp_path / "h" / name).read_text()
    window = [json.loads(line) for line in (tmp_path / "again" / DAILY_FILE).open()]
    # the newest run is at +30 h: the +0 h run is out of the 24 h window, +12 h is in
    assert sorted({r["run_id"] for r in window}) == ["20260701T121700Z", "20260702T061700Z"]


def test_a_missing_token_skips_the_archive_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    run = news_run(tmp_path, START, seed=1)
    assert main(["publish", str(run), "--site", str(tmp_path / "h"), "--hub", REPO]) == 0
    err = capsys.readouterr().err
    assert err == f"needle publish: HF_TOKEN is not set; archive to {REPO} skipped\n"
    assert (tmp_path / "h" / "history.jsonl").is_file()  # the publish itself happened


def test_a_missing_extra_is_one_line_naming_the_install():
    with pytest.raises(ConfigError) as caught:
        require_extra("no_such_module_for_needle", "hub", "needle publish --hub")
    message = str(caught.value)
    assert "uv sync --extra hub" in message and "\n" not in message


def test_a_report_cannot_name_a_file_to_upload(hub, tmp_path, capsys):
    """Issue 32 item 2: a header whose ``queries.path`` named a credentials file had it
    uploaded. An absolute path out of a report is never opened, even with the right
    digest; a file found by the header's name with another digest is an error naming the
    report, and nothing is written or uploaded."""
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = SECRETCANARY\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    report = news_run(runs, START, seed=1)
    data = json.loads(report.read_text())
    data["header"]["queries"] = {**data["header"]["queries"], "path": str(secret),
                                 "sha256": file_sha256(secret)}
    report.write_text(json.dumps(data))
    assert main(["publish", str(report), "--site", str(tmp_path / "h"), "--hub", REPO]) == 0
    files = archived(hub)
    assert not any(b"SECRETCANARY" in body for body in files.values())
    assert sorted(path.rsplit("/", 1)[-1] for path in files) == sorted(
        [report.name, DAILY_FILE])
    assert "its query file 'credentials' is not beside the report" in capsys.readouterr().err

    beside = runs / "credentials"  # the header's name, found beside it: a digest mismatch
    beside.write_text("aws_secret_access_key = OTHERCANARY\n")
    before = dict(hub.files)
    history = (tmp_path / "h" / "history.jsonl").read_text()
    again = news_run(runs, START + timedelta(hours=1), seed=2)
    data = json.loads(again.read_text())
    data["header"]["queries"] = {**data["header"]["queries"], "path": "../../credentials"}
    again.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["publish", str(again), "--site", str(tmp_path / "h"), "--hub", REPO]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"{again.name}: header.queries.sha256 is 0000.*'credentials'.*does "
                     r"not match.*refusing to archive or read it", err), err
    assert "OTHERCANARY" not in err
    assert hub.files == before
    assert (tmp_path / "h" / "history.jsonl").read_text() == history
