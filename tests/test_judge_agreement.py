"""`needle judge-agreement`: weighted κ and Kendall's τ-b checked against known values and
independent formulas, and the command on real reports written by the benches' own code."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from search_runs import START, finance_run, header, judged_case, news_run, write_report

from needle_lib.cli import main
from needle_lib.metrics.agreement import confusion_matrix, kendall_tau_b, weighted_kappa

# --- the statistics -------------------------------------------------------------------------


def test_two_categories_is_cohens_kappa_known_value() -> None:
    """The textbook 2×2 example (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no): κ = 0.4; with
    two categories every weighting is the unweighted κ."""
    matrix = [[20, 5], [10, 15]]
    assert weighted_kappa(matrix, "linear") == pytest.approx(0.4)
    assert weighted_kappa(matrix, "quadratic") == pytest.approx(0.4)


def test_linear_kappa_worked_by_hand() -> None:
    # observed weighted disagreement 2/10; by chance 45/100; κ = 1 - 0.2/0.45 = 5/9
    assert weighted_kappa([[2, 1, 0], [0, 2, 1], [1, 0, 3]], "linear") == pytest.approx(5 / 9)


PAIRS = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=60)


@given(PAIRS)
def test_quadratic_kappa_is_the_moment_formula(pairs) -> None:
    """Quadratic-weighted κ = 2 cov(a, b) / (var a + var b + (mean a - mean b)²), population
    moments: an independent route to the same number."""
    n = len(pairs)
    mean_a = sum(a for a, _ in pairs) / n
    mean_b = sum(b for _, b in pairs) / n
    cov = sum((a - mean_a) * (b - mean_b) for a, b in pairs) / n
    var_a = sum((a - mean_a) ** 2 for a, _ in pairs) / n
    var_b = sum((b - mean_b) ** 2 for _, b in pairs) / n
    denominator = var_a + var_b + (mean_a - mean_b) ** 2
    kappa = weighted_kappa(confusion_matrix(pairs, 5), "quadratic")
    if denominator == 0:
        assert kappa is None
    else:
        assert kappa == pytest.approx(2 * cov / denominator, abs=1e-9)


@given(st.lists(st.integers(0, 4), min_size=2, max_size=40))
def test_identical_ratings_agree_perfectly(ratings) -> None:
    matrix = confusion_matrix([(r, r) for r in ratings], 5)
    for weighting in ("linear", "quadratic"):
        kappa = weighted_kappa(matrix, weighting)
        assert kappa is None if len(set(ratings)) == 1 else kappa == pytest.approx(1.0)


def test_rating_outside_the_scale_is_named() -> None:
    with pytest.raises(ValueError, match=r"rating pair \(5, 0\) outside 0..4"):
        confusion_matrix([(5, 0)], 5)


def test_kendall_tau_known_values() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # one tie on each side: (C - D) / sqrt((n0 - t_x)(n0 - t_y)) = 4 / 5
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(4 / 5)
    assert kendall_tau_b([1], [2]) is None
    assert kendall_tau_b([1, 1], [1, 2]) is None


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=14))
def test_kendall_tau_b_matches_scipy(pairs) -> None:
    stats = pytest.importorskip("scipy.stats")  # a dev-environment check only
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    ours = kendall_tau_b(x, y)
    theirs = stats.kendalltau(x, y).statistic
    if ours is None:
        assert math.isnan(theirs)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


# --- the command on real reports ------------------------------------------------------------

ENGINES = ["exa", "brave", "tavily"]


def judged_report(directory: Path, *, judge: str = "judge-model", harsh_on: str | None = None,
                  bench: str = "news", texts: dict[str, str] | None = None) -> Path:
    """Four queries, three engines with a clear order (exa > brave > tavily). ``harsh_on``
    makes this report's judge rate that engine's own pages 0: it drops to last."""
    cases = []
    for q in range(4):
        qid = f"q{q}"
        text = (texts or {}).get(qid, f"query {q}")
        for engine, ratings in zip(ENGINES, ([4, 3, 2], [3, 2, 1], [2, 1, 0]), strict=True):
            if engine == harsh_on:
                ratings = [0, 0, 0]
            cases.append(judged_case(qid, text, engine, ratings))
    head = header(bench, "judged", ENGINES, 4, START)
    head["judge"]["model"] = judge
    directory.mkdir(parents=True, exist_ok=True)
    return write_report(directory, head, cases, START)


def agreement(capsys, a: Path, b: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["judge-agreement", str(a), str(b), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_same_ratings_agree_fully_and_say_it_is_one_judge(tmp_path, capsys) -> None:
    a = judged_report(tmp_path / "a")
    b = judged_report(tmp_path / "b")
    code, out, err = agreement(capsys, a, b, "--json")
    data = json.loads(out)
    assert code == 0
    assert data["pairs"] == 36 and data["only_a_pairs"] == data["only_b_pairs"] == 0
    assert data["exact_agreement"] == 1.0 and data["kappa_quadratic"] == pytest.approx(1.0)
    assert data["kendall_tau"]["estimate"] == 1.0
    assert (data["kendall_tau"]["low"], data["kendall_tau"]["high"]) == (1.0, 1.0)
    assert data["swapped"] == []
    assert "both reports name the same judge (judge-model, prompt v)" in err


def test_a_judge_that_reorders_the_engines_is_caught(tmp_path, capsys) -> None:
    a = judged_report(tmp_path / "a")
    b = judged_report(tmp_path / "b", judge="cheap-local", harsh_on="exa")
    code, out, err = agreement(capsys, a, b)
    assert code == 0 and err == ""
    assert "judge judge-model, prompt v" in out and "judge cheap-local, prompt v" in out
    assert "36 judged pair(s) in both" in out
    # relevant means >= 3: exa's pages rated 2 under A are not relevant under either judge
    assert "agreement: exact 66.7 % · within one 66.7 % · relevant (≥ 3) 77.8 %" in out
    assert "Kendall τ-b -0.33  [95 % CI -0.33, -0.33, queries resampled]" in out
    assert "order swapped: exa > brave under A, brave > exa under B, exa > tavily" in out
    code, out, _ = agreement(capsys, a, b, "--json")
    data = json.loads(out)
    # column B = 0 by A's rating: tavily's own 0s, and exa's 2, 3 and 4, once per query
    assert [row[0] for row in data["ratings"]] == [4, 0, 4, 4, 4]
    assert [s["engine"] for s in data["engines"]] == ENGINES
    assert [(s["a_rank"], s["b_rank"]) for s in data["engines"]] == [(1, 3), (2, 1), (3, 2)]
    assert data["swapped"] == [["exa", "brave"], ["exa", "tavily"]]


def test_pairs_on_different_evidence_and_queries_in_one_report_are_counted(
        tmp_path, capsys) -> None:
    a = judged_report(tmp_path / "a")
    b_path = judged_report(tmp_path / "b", judge="other")
    report = json.loads(b_path.read_text(encoding="utf-8"))
    report["cases"][0]["results"][0]["snippet"] = "another snippet of the page"
    report["cases"] = [c for c in report["cases"] if c["query_id"] != "q3"]
    b_path.write_text(json.dumps(report), encoding="utf-8")
    code, out, err = agreement(capsys, a, b_path, "--json")
    data = json.loads(out)
    assert code == 0
    assert data["shared_queries"] == 3 and data["only_a_queries"] == ["q3"]
    assert data["evidence_differs"] == 1
    assert (data["pairs"], data["only_a_pairs"], data["only_b_pairs"]) == (26, 1, 1)
    assert "1 query(ies) only in A and 0 only in B are left out" in err


@pytest.mark.parametrize("problem", ["bench", "known-item", "disjoint", "text"])
def test_reports_that_do_not_compare_are_refused_by_name(tmp_path, capsys, problem) -> None:
    a = judged_report(tmp_path / "a")
    if problem == "bench":
        b = judged_report(tmp_path / "b", bench="agentic_rare")
        expected = f"not the same bench: {a} is news, {b} is agentic_rare"
    elif problem == "known-item":
        b = finance_run(tmp_path, START, seed=1)
        expected = f"{b}: a known_item report (finance) has no judge ratings"
    elif problem == "disjoint":
        b = news_run(tmp_path, START, seed=5, engines=tuple(ENGINES))
        expected = "have no query in common"
    else:
        b = judged_report(tmp_path / "b", texts={"q2": "something else"})
        expected = "query 'q2' is 'query 2' in"
    code, out, err = agreement(capsys, a, b)
    assert code == 2 and out == ""
    assert expected in err


def test_a_report_that_is_not_a_report_is_named(tmp_path, capsys) -> None:
    a = judged_report(tmp_path / "a")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    code, _, err = agreement(capsys, a, broken)
    assert code == 2 and str(broken) in err


def test_reading_leaves_reports_unchanged(tmp_path, capsys) -> None:
    a = judged_report(tmp_path / "a")
    b = judged_report(tmp_path / "b", judge="other", harsh_on="tavily")
    before = copy.deepcopy([a.read_bytes(), b.read_bytes()])
    assert agreement(capsys, a, b)[0] == 0
    assert [a.read_bytes(), b.read_bytes()] == before
