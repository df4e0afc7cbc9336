"""`needle compare`: paired comparison of two real recall dumps (B − A)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from evalrun import record_runs
from search_runs import START, header, known_case, write_report

from needle_lib.benches.runfiles import finish_run
from needle_lib.cli import main
from needle_lib.dashboard.paired import ComparisonError, compare_runs
from needle_lib.dashboard.runs import load_run
from needle_lib.jsonio import write_json_atomic
from needle_lib.recall.rescore import dump_corpus, policy_of, rescore_dump
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


# --- flipped cases ------------------------------------------------------------------------

HOSTILE = "<script>alert(1)</script>"


def answered_wrong(source: Path, target: Path, *indices: int) -> Path:
    """The dump with the answers of ``indices`` replaced by a wrong one, scored again by
    ``needle rescore``'s own code, so each verdict is the scorer's, not the test's."""
    dump = json.loads(source.read_text(encoding="utf-8"))
    for index in indices:
        dump["cases"][index]["response"] = f"x = 1  # {HOSTILE}"
    rescored, _ = rescore_dump(dump, dump_corpus(dump), policy_of(dump))
    write_json_atomic(target, rescored)
    return target


@pytest.fixture(scope="module")
def flipped(dumps, tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """A fails targets 0 and 1, B fails target 2: one regression, two improvements."""
    directory = tmp_path_factory.mktemp("flipped")
    reference = dumps["http_server__reference"]
    a = answered_wrong(reference, directory / "a.json", 0, 1)
    b = answered_wrong(reference, directory / "b.json", 2)
    ids = [c["case_id"] for c in json.loads(reference.read_text(encoding="utf-8"))["cases"]]
    return a, b, ids


def test_lists_every_flipped_target_regressions_first(flipped, capsys):
    a, b, ids = flipped
    code, out, _ = compare(capsys, a, b)
    assert code == 0
    lines = out.splitlines()
    start = lines.index("flipped targets: 3 (1 pass → fail, 2 fail → pass)")
    listed = lines[start + 1:start + 4]
    assert [line.split()[3] for line in listed] == [ids[2], ids[0], ids[1]]
    assert listed[0].startswith("  pass → fail") and listed[1].startswith("  fail → pass")
    assert re.search(r"A \d+/\d+ lines \(100 %\)  →  B 0/\d+ lines \(0 %\)", listed[0])
    assert out.index("flipped targets") < out.index("per target (B vs A)")


def test_a_wholesale_regression_names_every_target(dumps, capsys):
    code, out, _ = compare(capsys, dumps["http_server__reference"], dumps["http_server__wrong"])
    ids = [c["case_id"] for c in load_run(dumps["http_server__reference"]).cases]
    assert code == 0 and "flipped targets: 6 (6 pass → fail, 0 fail → pass)" in out
    assert all(f"pass → fail  {i}" in out for i in ids)


def test_json_carries_the_flips(flipped, capsys):
    a, b, ids = flipped
    _, out, _ = compare(capsys, a, b, "--json")
    flips = json.loads(out)["flips"]
    assert [(f["case"], f["direction"]) for f in flips] == [
        (ids[2], "pass → fail"), (ids[0], "fail → pass"), (ids[1], "fail → pass")]
    assert flips[0]["b_score"].startswith("0/")


def test_html_shows_both_answers_side_by_side(flipped, tmp_path, capsys):
    a, b, ids = flipped
    page = tmp_path / "flips.html"
    code, _, err = compare(capsys, a, b, "--html", page)
    assert code == 0 and f"side by side → {page}" in err
    html = page.read_text(encoding="utf-8")
    heads = re.findall(r'<h2 class="needle-flip-head">([^<]*)</h2>', html)
    assert heads == [f"pass → fail: {ids[2]}", f"fail → pass: {ids[0]}",
                     f"fail → pass: {ids[1]}"]
    first = html[html.index(heads[0]):html.index(heads[1])]
    left, right = first.split("</td><td>")
    assert "needle-matched" in left and "needle-missing" not in left  # A recalled it
    assert "needle-missing" in right and "needle-hallucinated" in right  # B did not
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_html_needs_the_corpus_and_says_so(dumps, tmp_path, capsys):
    moved = variant(dumps["http_server__reference"], tmp_path / "moved.json",
                    lambda dump: dump["corpus"].update(name="gone", config="gone.toml"))
    code, out, err = compare(capsys, moved, moved, "--html", tmp_path / "x.html")
    assert code == 2 and out == "" and "needle compare: " in err and "gone" in err
    assert not (tmp_path / "x.html").exists()


@pytest.fixture
def search_reports(tmp_path) -> tuple[Path, Path]:
    """Two finance runs: exa loses q1 (hit → miss), brave gains it, q2 stays a miss."""
    def report(minute: int, exa_q1: int | None, brave_q1: int | None) -> Path:
        started = START + timedelta(minutes=minute)
        cases = [known_case("q1", "acme ceo", "exa", exa_q1),
                 known_case("q1", "acme ceo", "brave", brave_q1),
                 known_case("q2", f"globex ceo {HOSTILE}", "exa", None),
                 known_case("q2", f"globex ceo {HOSTILE}", "brave", None,
                            search_error="HTTP 503")]
        return write_report(tmp_path, header("finance", "known_item", ["exa", "brave"], 2,
                                             started), cases, started)
    return report(0, 1, None), report(1, None, 2)


def test_search_reports_list_flipped_cases(search_reports, capsys):
    code, out, err = compare(capsys, *search_reports)
    assert code == 0 and err == ""
    assert "bench finance · 3 (query, engine) case(s) decided in both" in out
    assert "flipped cases: 2 (1 pass → fail, 1 fail → pass)" in out
    assert re.search(r"pass → fail  exa · q1 +A hit @1  →  B miss  · 'acme ceo'$", out,
                     re.M)
    assert re.search(r"fail → pass  brave · q1 +A miss  →  B hit @2", out)
    assert out.index("exa · q1") < out.index("brave · q1")


def test_search_json_and_html(search_reports, tmp_path, capsys):
    page = tmp_path / "search.html"
    code, out, _ = compare(capsys, *search_reports, "--json", "--html", page)
    data = json.loads(out)
    assert code == 0 and data["bench"] == "finance" and data["shared_cases"] == 3
    assert [(f["engine"], f["query_id"], f["direction"], f["a_score"], f["b_score"])
            for f in data["flips"]] == [("exa", "q1", "pass → fail", "hit @1", "miss"),
                                        ("brave", "q1", "fail → pass", "miss", "hit @2")]
    html = page.read_text(encoding="utf-8")
    assert html.count('class="needle-flip"') == 2
    assert html.count('class="needle-search"') == 4  # each flip: A's results and B's
    assert "gold: ceo: gold q1" in html


def test_search_reports_of_other_benches_or_kinds_are_refused(search_reports, dumps,
                                                              tmp_path, capsys):
    other = variant(search_reports[1], tmp_path / "legal.json",
                    lambda report: report["header"].update(bench="legal"))
    code, _, err = compare(capsys, search_reports[0], other)
    assert code == 2 and "benches differ" in err and "legal" in err
    code, _, err = compare(capsys, search_reports[0], dumps["http_server__reference"])
    assert code == 2 and "one is a recall dump, the other a search report" in err


def test_search_reports_of_one_engine_in_two_modes_compare_with_a_warning(tmp_path, capsys):
    """tavily "basic" against "advanced" is a fair comparison, but the reader is told."""
    def report(name: str, modes: dict[str, str] | None, brave_q1: int | None) -> Path:
        head = header("finance", "known_item", ["exa", "tavily"], 1, START)
        if modes is None:
            del head["engine_modes"]  # a report of a Needle before modes were recorded
        else:
            head["engine_modes"] = modes
        cases = [known_case("q1", "acme ceo", "exa", 1),
                 known_case("q1", "acme ceo", "tavily", brave_q1)]
        path = tmp_path / name
        finish_run(path, head, cases)
        return path
    old = report("old.json", None, None)  # written before modes were recorded: basic
    basic = report("basic.json", {"tavily": "basic"}, 1)
    advanced = report("advanced.json", {"tavily": "advanced"}, 2)
    code, out, err = compare(capsys, old, basic)
    assert code == 0 and err == "" and "flipped cases: 1" in out
    code, out, err = compare(capsys, old, advanced)
    assert code == 0 and "flipped cases: 1" in out
    assert err.splitlines() == [
        "needle compare: warning: an engine ran in another mode (its cases are another "
        "setup): engine_modes.tavily: 'basic' (old.json) vs 'advanced' (advanced.json)"]
