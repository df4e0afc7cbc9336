"""Target eligibility and sampling: deterministic, stratified by depth, filterable."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from recall_helpers import real_corpus, tmp_config, write_sources

from needle_lib.recall.corpus import SamplePolicy, load_corpus
from needle_lib.recall.extract import CODE, parse_corpus
from needle_lib.recall.targets import composition, find_targets, sample_targets, select_targets

JQUERY = SamplePolicy(k=16, seed=42, primary_lines=20)


def test_sampling_is_deterministic_for_k_and_seed() -> None:
    parsed = real_corpus("jquery").parsed
    first, _ = select_targets(parsed, JQUERY)
    again, _ = select_targets(parsed, JQUERY)
    assert [t.case_id for t in first] == [t.case_id for t in again]
    assert len(first) == 16 and len({t.case_id for t in first}) == 16


def test_different_seeds_draw_different_samples() -> None:
    parsed = real_corpus("jquery").parsed
    samples = {
        tuple(t.case_id for t in select_targets(parsed, replace(JQUERY, seed=seed))[0])
        for seed in range(5)
    }
    assert len(samples) == 5


def test_k_at_least_the_eligible_count_takes_all_in_corpus_order() -> None:
    eligible = real_corpus("http_server").targets.eligible
    for k in (len(eligible), len(eligible) + 5):
        assert sample_targets(eligible, k, seed=3) == eligible
    assert [t.start_line for t in eligible] == sorted(t.start_line for t in eligible)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 3, 16, 40])
def test_each_pick_lies_in_its_stratum(k: int, seed: int) -> None:
    eligible = real_corpus("jquery").targets.eligible
    n = len(eligible)
    picks = sample_targets(eligible, k, seed)
    assert len(picks) == k
    for stratum, pick in enumerate(picks):
        index = eligible.index(pick)
        assert stratum * n // k <= index < (stratum + 1) * n // k, (stratum, index)


def test_a_sample_spans_beginning_middle_and_end() -> None:
    jquery = real_corpus("jquery")
    total = len(jquery.lines)
    starts = [t.start_line for t in select_targets(jquery.parsed, JQUERY)[0]]
    assert starts == sorted(starts)
    assert starts[0] < total / 8 and starts[-1] > total * 7 / 8
    assert any(total / 3 < s < total * 2 / 3 for s in starts)


def test_min_code_lines_drops_prose_dominated_targets() -> None:
    parsed = real_corpus("http_server").parsed
    everything = find_targets(parsed, 20)
    coded = find_targets(parsed, 20, min_code_lines=10)

    def code_lines(target) -> int:
        return composition(target.window_kinds(parsed.kinds))[CODE]

    assert "log_message" in {t.name for t in everything.eligible}
    assert code_lines(next(t for t in everything.eligible if t.name == "log_message")) < 10
    assert {t.name for t in coded.eligible} == {
        t.name for t in everything.eligible if code_lines(t) >= 10
    }
    assert len(coded.eligible) < len(everything.eligible)


def test_the_target_set_counts_what_it_passed_over_and_says_why_nothing_is_left() -> None:
    parsed = real_corpus("http_server").parsed
    normal = find_targets(parsed, 20, min_code_lines=10)
    assert normal.found == len(parsed.functions)
    assert normal.too_short == sum(f.body_length < 20 for f in parsed.functions) > 0
    assert normal.too_little_code > 0 and normal.nothing_to_ask() is None
    assert f"{normal.too_short} with a body shorter than primary_lines = 20" in normal.shortfall()
    longest = max(f.body_length for f in parsed.functions)
    empty = find_targets(parsed, longest + 1)
    assert not empty.eligible and empty.too_short == empty.found
    reason = empty.nothing_to_ask()
    assert reason is not None
    assert f"the longest has {longest}" in reason and "--primary-lines N" in reason


def test_composition_counts_every_kind() -> None:
    assert composition(["code", "blank", "code", "docstring"]) == {
        "code": 2, "blank": 1, "comment": 0, "docstring": 1,
    }


def test_functions_are_selected_by_name_or_case_id() -> None:
    parsed = real_corpus("jquery").parsed
    chosen, _ = select_targets(parsed, JQUERY, functions=["val", "PSEUDO-L1604", "val"])
    assert [t.case_id for t in chosen] == ["val", "PSEUDO-L1604"]
    both, _ = select_targets(parsed, JQUERY, functions=["PSEUDO"])
    assert [t.case_id for t in both] == ["PSEUDO-L1604", "PSEUDO-L1814"]
    assert {t.function.signature.strip() for t in both} == {
        "PSEUDO: function( match ) {", "PSEUDO: function( pseudo, argument ) {",
    }


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("get", "--function get: excluded as unanswerable (duplicate name and signature)"),
        ("isWindow", "--function isWindow: its body has 1 line(s), fewer than primary_lines = 20"),
        ("noSuchThing", "--function noSuchThing: no function of that name in the corpus"),
    ],
)
def test_unknown_functions_say_why(name: str, message: str) -> None:
    with pytest.raises(LookupError) as caught:
        select_targets(real_corpus("jquery").parsed, JQUERY, functions=["val", name])
    assert str(caught.value).startswith(message)


def test_a_name_lost_to_a_cross_file_collision_says_so(tmp_path: Path) -> None:
    write_sources(tmp_path, {
        "a.py": "def main():\n    return 1\n",
        "b.py": "def main(argv):\n    a = 1\n    b = 2\n    return a + b\n",
    })
    parsed = parse_corpus(load_corpus(tmp_config(tmp_path, "*.py")))
    with pytest.raises(LookupError) as caught:
        select_targets(parsed, SamplePolicy(primary_lines=3), functions=["main"])
    first = parsed.functions[0].file
    assert str(caught.value).startswith(
        f"--function main: its body in {first} has 1 line(s), fewer than primary_lines = 3"
    )
