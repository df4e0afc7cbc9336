"""``--shard I/N`` splits a run over machines; ``needle merge`` joins the parts again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from evalrun import EVALS
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.cli import main as needle
from needle_lib.paths import REPO_ROOT
from needle_lib.plugin.shard import assign
from needle_lib.recall.store import STORED_AS
from needle_lib.testing.openai_server import FakeOpenAIServer

TIMING = {"requested_at", "latency_s", "timings"}
PAIR = "http_server__m"


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(1, 50), max_size=30),
       st.integers(1, 6))
def test_assign_is_a_deterministic_balanced_partition(sizes, count):
    shard_of = assign(sizes, count)
    assert shard_of == assign(dict(reversed(sizes.items())), count)  # order-independent
    assert shard_of.keys() == sizes.keys()
    assert set(shard_of.values()) <= set(range(1, count + 1))
    load = [sum(n for g, n in sizes.items() if shard_of[g] == i) for i in range(1, count + 1)]
    assert max(load) - min(load) <= max(sizes.values(), default=0)


def pytest_evals(results: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(EVALS / "test_recall.py"), f"--rootdir={REPO_ROOT}",
         "-p", "no:cacheprovider", "-q", "--no-color", "--results-dir", str(results), *args],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False, timeout=600,
    )


def collected(results: Path, *args: str) -> list[str]:
    run = pytest_evals(results, "--collect-only", *args)
    return [line for line in run.stdout.splitlines() if "test_recall[" in line]


def test_pair_shards_partition_the_collection_and_keep_pairs_whole(tmp_path):
    select = ("--corpus", "http_server", "--corpus", "jquery", "--sample", "3",
              "--model", "a", "--model", "b", "--model", "c")
    full = collected(tmp_path, *select)
    shards = [collected(tmp_path, *select, "--shard", f"{i}/3") for i in (1, 2, 3)]
    assert len(full) == 2 * 3 * 3
    assert sorted(i for shard in shards for i in shard) == sorted(full)  # each case once

    def pairs(ids):
        return {(i.split("[")[1].split("-")[0], i.rstrip("]").rsplit("-", 1)[1]) for i in ids}

    assert all(shards) and not any(pairs(a) & pairs(b) for a in shards for b in shards
                                   if a is not b)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """One serial run and the same run split by case over three shards, on one server."""
    results = tmp_path_factory.mktemp("runs")
    with FakeOpenAIServer("mixed") as server:
        select = ("--corpus", "http_server", "--sample", "7", "--model", "m",
                  "--base-url", server.url)
        pytest_evals(results / "serial", *select)
        for i in (1, 2, 3):
            pytest_evals(results / "sharded", *select, "--shard", f"{i}/3", "--shard-by", "case")
    return results


def parts(runs: Path) -> list[Path]:
    return sorted((runs / "sharded" / "parts").glob(f"{PAIR}.shard-*-of-3.json"))


def comparable(dump: dict) -> dict:
    return {**dump, "summary": {**dump["summary"], "latency_s": None},
            "cases": [{k: v for k, v in c.items() if k not in TIMING} for c in dump["cases"]]}


def test_merged_parts_equal_a_single_machine_dump(runs, tmp_path, capsys):
    assert len(parts(runs)) == 3
    part_cases = [json.loads(p.read_text())["cases"] for p in parts(runs)]
    assert all(part_cases) and all(json.loads(p.read_text())["complete"] is False
                                   for p in parts(runs))
    out = tmp_path / "merged.json"
    assert needle(["merge", *map(str, parts(runs)), "--out", str(out)]) == 0
    assert "7 of 7 cases" in capsys.readouterr().out
    merged = json.loads(out.read_text())
    serial = json.loads((runs / "serial" / f"{PAIR}.json").read_text())
    serial.pop(STORED_AS)  # where the store keeps the serial run: bookkeeping, not a result
    assert list(merged) == list(serial)  # same fields, same order
    assert comparable(merged) == comparable(serial)
    assert {c["outcome"] for c in merged["cases"]} == {"passed", "failed"}


def _write(path: Path, dump: dict) -> Path:
    path.write_text(json.dumps(dump))
    return path


def test_merge_refuses_parts_of_another_setup_naming_the_difference(runs, tmp_path, capsys):
    first, second, third = parts(runs)
    other = json.loads(second.read_text())
    other["model"]["request"]["temperature"] = 0.7
    other["model"]["request"]["concurrency"] = 8  # throughput only: never a difference
    other["corpus"]["sha256"] = "0" * 64
    bad = _write(tmp_path / "other.json", other)
    assert needle(["merge", str(first), str(bad), str(third), "--out",
                   str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "different setup" in err and "corpus.sha256" in err
    assert "model.request.temperature: 0.0" in err and "0.7" in err
    assert "concurrency" not in err
    assert not (tmp_path / "m.json").exists()


def test_merge_refuses_duplicated_cases_and_shards(runs, tmp_path, capsys):
    first, second, _ = parts(runs)
    assert needle(["merge", str(first), str(second), str(first), "--out",
                   str(tmp_path / "m.json")]) == 2
    assert "shard 1/3 given twice" in capsys.readouterr().err
    overlapping = json.loads(second.read_text())
    overlapping["shard"]["index"] = 3
    overlapping["cases"].append(json.loads(first.read_text())["cases"][0])
    case_id = overlapping["cases"][-1]["case_id"]
    bad = _write(tmp_path / "overlap.json", overlapping)
    assert needle(["merge", str(first), str(bad), "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "more than one part" in err and case_id in err
    split = json.loads(second.read_text())
    split["shard"]["count"] = 4
    bad = _write(tmp_path / "split.json", split)
    assert needle(["merge", str(first), str(bad), "--out", str(tmp_path / "m.json")]) == 2
    assert "different --shard splits" in capsys.readouterr().err


def test_merge_names_missing_cases_and_leaves_a_resumable_dump(runs, tmp_path, capsys):
    first, _, third = parts(runs)
    killed = json.loads(third.read_text())
    lost = killed["cases"].pop()["case_id"]
    short = _write(tmp_path / "killed.json", killed)
    out = tmp_path / "m.json"
    assert needle(["merge", str(first), str(short), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "shard 2/3: no part given" in err
    assert f"lacks 1 of its cases: {lost}" in err
    assert f"--dump {out} --resume" in err
    merged = json.loads(out.read_text())
    assert merged["complete"] is False and "shard" not in merged
    assert merged["summary"]["not_run"] == 7 - len(merged["cases"])


def test_merge_refuses_old_search_reports_and_broken_files(tmp_path, capsys):
    report = _write(tmp_path / "news.json", {"benchmark": "news", "engines": {}})
    assert needle(["merge", str(report), "--out", str(tmp_path / "m.json")]) == 2
    assert "without 'header' and 'cases'" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert needle(["merge", str(broken), "--out", str(tmp_path / "m.json")]) == 2
    assert f"{broken}: invalid JSON at line 1 column 2" in capsys.readouterr().err
