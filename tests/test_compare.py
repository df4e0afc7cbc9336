"""`needle compare`: paired comparison of two real recall dumps (B − A)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalrun import record_runs

from needle_lib.cli import main
from needle_lib.dashboard.paired import ComparisonError, compare_runs
from needle_lib.dashboard.runs import load_run
from needle_lib.jsonio import write_json_atomic
from needle_lib.recall.results import finalize


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    results = tmp_path_factory.mktemp("results")
    record_runs(results, [
        (None, "reference", ["http_server"], "--sample", "6"),
        ("wrong", "wrong", ["http_server"], "--sample", "6"),
        ("reindent", "relaxed", ["http_server"], "--sample", "6", "--relax-indent"),
        (None, "reference", ["novel_16k"], "--sample", "6"),
    ])
    return {path.stem: path for path in results.glob("*.json")}


def variant(source: Path, target: Path, edit) -> Path:
    dump = json.loads(source.read_text(encoding="utf-8"))
    edit(dump)
    write_json_atomic(target, dump)
    return target


def compare(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_prints_paired_figures(dumps, capsys):
    code, out, err = compare(capsys, dumps["http_server__wrong"], dumps["http_server__reference"])
    assert code == 0 and err == ""
    assert "6 shared valid target(s)" in out
    assert "6 win(s) · 0 loss(es) · 0 tie(s)" in out
    assert "matched %: A 0.0 → B 100.0  Δ +100.0 pts  [95 % CI +100.0, +100.0]" in out
    assert "pass rate: A 0.0 → B 100.0  Δ +100.0 pts" in out


def test_json_output(dumps, capsys):
    code, out, _ = compare(capsys, dumps["http_server__reference"], dumps["http_server__wrong"],
                           "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["wins"], data["losses"], data["ties"]) == (0, 6, 0)
    assert data["matched_pct_diff"]["estimate"] == -100.0
    assert data["b"]["pass_rate"] == 0.0 and len(data["cases"]) == 6


def test_identical_runs_tie_with_a_zero_interval(dumps):
    run = load_run(dumps["http_server__reference"])
    result = compare_runs(run, run)
    assert result.ties == len(result.cases) == 6
    assert (result.matched_diff.low, result.matched_diff.high) == (0.0, 0.0)


def test_only_targets_valid_in_both_are_paired(dumps, tmp_path):
    def cut_and_break(dump):
        dump["cases"] = dump["cases"][:4]
        dump["cases"][0].update(outcome="error", matched=None, scored=None, composition=None,
                                error="HTTP 500")
        finalize(dump, in_progress=True)

    partial = variant(dumps["http_server__reference"], tmp_path / "partial.json", cut_and_break)
    result = compare_runs(load_run(dumps["http_server__wrong"]), load_run(partial))
    assert len(result.cases) == 3
    assert len(result.only_a) == 2 and len(result.excluded) == 1
    assert any("INCOMPLETE" in w and "INVALID" in w for w in result.warnings)


def test_refuses_different_corpora(dumps, capsys):
    code, out, err = compare(capsys, dumps["http_server__reference"],
                             dumps["novel_16k__reference"])
    assert code == 2 and out == ""
    assert "corpora differ" in err and "novel_16k" in err


def test_refuses_different_scoring_policies(dumps, capsys):
    code, _, err = compare(capsys, dumps["http_server__wrong"], dumps["http_server__relaxed"])
    assert code == 2
    assert "scoring policies differ" in err and "relax-indent" in err


def test_warns_when_versions_differ(dumps, tmp_path, capsys):
    old = variant(dumps["http_server__reference"], tmp_path / "old.json",
                  lambda dump: dump.update(prompt_version="needle-recall-0"))
    code, out, err = compare(capsys, old, dumps["http_server__wrong"])
    assert code == 0 and "6 shared valid target(s)" in out
    assert "warning: prompt_version differs: 'needle-recall-0' (A)" in err


def test_no_shared_valid_target_is_an_error(dumps, tmp_path):
    def error_all(dump):
        for case in dump["cases"]:
            case.update(outcome="error", matched=None, scored=None, composition=None)
        finalize(dump, in_progress=False)

    broken = variant(dumps["http_server__wrong"], tmp_path / "broken.json", error_all)
    with pytest.raises(ComparisonError, match="no target is valid in both"):
        compare_runs(load_run(dumps["http_server__reference"]), load_run(broken))


def test_unreadable_dump_is_named(dumps, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = compare(capsys, dumps["http_server__reference"], bad)
    assert code == 2 and "bad.json: invalid JSON at line 1 column 2" in err
    code, _, err = compare(capsys, tmp_path / "missing.json", bad)
    assert code == 2 and "missing.json: cannot read" in err
