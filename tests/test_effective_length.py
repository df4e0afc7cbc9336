"""Effective context length (NoLiMa's rule) over a novel family's sizes."""

from __future__ import annotations

from typing import Any

from needle_lib.recall.effective_length import (
    RETENTION,
    describe,
    effective_index,
    effective_lengths,
)


def dump(corpus: str, passes: list[bool], *, model: str = "m", relax: bool = False,
         errors: int = 0, complete: bool = True) -> dict[str, Any]:
    """A recall dump as the effective-length reader needs it: one case per target (the
    same ids at every size, as the novel corpora place the same targets), ``errors``
    errored cases after them."""
    cases = [{"case_id": f"t{i}", "outcome": "passed" if ok else "failed"}
             for i, ok in enumerate(passes)]
    cases += [{"case_id": f"e{i}", "outcome": "error"} for i in range(errors)]
    return {"corpus": {"name": corpus}, "model": {"key": model},
            "scoring": {"count_comments": True, "relax_indent": relax},
            "cases": cases, "valid": not errors, "complete": complete, "in_progress": False}


def fading(n: int = 18, model: str = "m") -> list[dict[str, Any]]:
    return [dump("novel_16k", [True] * n, model=model),
            dump("novel_64k", [i % 2 == 0 for i in range(n)], model=model),
            dump("novel_128k", [False] * n, model=model)]


def test_fading_model_is_effective_at_16k():
    (result,) = effective_lengths(fading())
    assert result.effective_k == 16 and result.interval_k == (16, 16)
    assert [s.pass_rate for s in result.sizes] == [100.0, 50.0, 0.0]
    assert result.threshold == 85.0 and result.notes == ()
    lines = describe(result)
    assert lines[0] == "m · novel_16k/64k/128k: effective length 16K [95 % CI 16K]"
    assert "novel_64k 50.0 % [" in lines[1] and "threshold 85.0 %" in lines[1]


def test_a_size_holding_85_percent_of_the_base_counts():
    sizes = [dump("novel_16k", [True] * 20), dump("novel_64k", [True] * 17 + [False] * 3),
             dump("novel_128k", [True] * 16 + [False] * 4)]
    (result,) = effective_lengths(sizes)
    assert RETENTION == 0.85
    assert result.effective_k == 64  # 85 % holds, 80 % does not


def test_the_walk_stops_at_the_first_size_that_falls_short():
    assert effective_index([100.0, 50.0, 100.0]) == 0
    assert effective_index([80.0, 70.0, 69.0]) == 2  # relative to the base, not to 100 %
    assert effective_index([60.0, None, 60.0]) == 0  # a size without a rate stops it
    assert effective_index([0.0, 0.0]) is None and effective_index([None, 50.0]) is None


def test_a_small_sample_gets_a_note_not_false_certainty():
    sizes = [dump("novel_16k", [True] * 4), dump("novel_64k", [True, True, True, False])]
    (result,) = effective_lengths(sizes)
    assert result.effective_k == 16  # 75 % < 85 %
    assert result.interval_k == (16, 64)
    assert any("too small to separate sizes" in n and "16K to 64K" in n for n in result.notes)
    assert describe(result)[0].endswith("effective length 16K [95 % CI 16K–64K]")


def test_too_few_shared_targets_for_an_interval():
    sizes = [dump("novel_ts_16k", [True, True]), dump("novel_ts_64k", [True, True])]
    (result,) = effective_lengths(sizes)
    assert (result.effective_k, result.interval_k, result.family) == (64, None, "typescript")
    assert result.notes == ("only 2 target(s) valid at every size: too few for an interval",)


def test_one_size_or_other_corpora_report_nothing():
    assert effective_lengths([dump("novel_16k", [True] * 5)]) == []
    assert effective_lengths([dump("jquery", [True] * 5), dump("http_server", [True])]) == []
    # one size of each flavour is not a family run twice
    assert effective_lengths([dump("novel_16k", [True]), dump("novel_ts_64k", [True])]) == []


def test_a_base_that_passes_nothing_has_no_effective_length():
    (result,) = effective_lengths([dump("novel_16k", [False] * 5),
                                   dump("novel_64k", [False] * 5)])
    assert result.effective_k is None and result.headline() == "none"
    assert result.notes == ("novel_16k passes nothing: no baseline to hold",)


def test_models_and_policies_are_kept_apart():
    runs = [*fading(model="a"), dump("novel_16k", [True] * 6, model="b"),
            dump("novel_64k", [True] * 6, model="b"),
            dump("novel_64k", [False] * 6, model="b", relax=True)]
    results = effective_lengths(runs)
    assert [(r.model, r.policy, r.effective_k) for r in results] == [
        ("a", "default", 16), ("b", "default", 64)]


def test_the_shortest_size_run_is_the_base_and_partial_runs_are_named():
    runs = [dump("novel_64k", [True] * 6, errors=2), dump("novel_128k", [True] * 6)]
    (result,) = effective_lengths(runs)
    assert result.base.corpus == "novel_64k" and result.effective_k == 128
    assert result.corpora == "novel_64k/128k"
    assert result.sizes[0].pass_rate == 100.0  # errors are not failures
    assert "rests on incomplete or errored run(s): novel_64k" in result.notes


def test_json_carries_the_rule_and_the_rates():
    (result,) = effective_lengths(fading())
    data = result.to_json()
    assert data["rule"].startswith("NoLiMa's rule") and data["effective_k"] == 16
    assert [s["pass_rate"] for s in data["sizes"]] == [100.0, 50.0, 0.0]
