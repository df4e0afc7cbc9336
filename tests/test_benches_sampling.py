"""Seeded sampling of generated rows: splitmix64, the shuffle, round-robin strata, hour seeds."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from needle_lib.benches.rows import seed_from_hour
from needle_lib.benches.sampling import (
    shuffled,
    splitmix64,
    stratified_sample,
    stratum_seed,
)


def test_splitmix64_matches_the_reference_sequence() -> None:
    """Vigna's splitmix64 from seed 1234567: the published first outputs."""
    state, outputs = 1234567, []
    for _ in range(3):
        state, value = splitmix64(state)
        outputs.append(value)
    assert outputs == [6457827717110365317, 3203168211198807973, 9817491932198370423]


@given(st.lists(st.integers(), max_size=40), st.integers(min_value=0, max_value=2**64 - 1))
def test_shuffle_is_a_permutation_fixed_by_the_seed(items: list[int], seed: int) -> None:
    once = shuffled(items, seed)
    assert sorted(once) == sorted(items) and shuffled(items, seed) == once


ROWS = [{"id": i, "bucket": bucket} for i, bucket in enumerate("aaaaaaabbbc")]


def test_round_robin_covers_every_stratum_before_repeating_one() -> None:
    picked = stratified_sample(ROWS, lambda r: r["bucket"], 3, seed=1)
    assert sorted(r["bucket"] for r in picked) == ["a", "b", "c"]
    five = Counter(r["bucket"] for r in stratified_sample(ROWS, lambda r: r["bucket"], 5, 1))
    assert five == {"a": 2, "b": 2, "c": 1}


def test_seeds_decide_which_rows_and_the_same_seed_repeats() -> None:
    draws = {tuple(r["id"] for r in stratified_sample(ROWS, lambda r: r["bucket"], 4, seed))
             for seed in range(10)}
    assert len(draws) > 1
    again = stratified_sample(ROWS, lambda r: r["bucket"], 4, 3)
    assert again == stratified_sample(ROWS, lambda r: r["bucket"], 4, 3)


def test_no_sampling_when_the_limit_covers_everything() -> None:
    assert stratified_sample(ROWS, lambda r: r["bucket"], 0, 5) == ROWS
    assert stratified_sample(ROWS, lambda r: r["bucket"], 50, 5) == ROWS


def test_hour_seed_is_stable_within_an_hour() -> None:
    early = datetime(2026, 7, 2, 14, 1, tzinfo=UTC)
    assert seed_from_hour(early) == seed_from_hour(early.replace(minute=59))
    assert seed_from_hour(early) != seed_from_hour(early.replace(hour=15))


# NEEDLE's own picks for these rows (its sampler run on them, the ids pinned here): a user
# comparing with NEEDLE's published runs must get the very same sample for the same seed.
DOMAINS = ["tech"] * 4 + ["sports"] * 3 + ["politics"] * 2 + ["science", "tech", "sports",
                                                                 "politics", "health",
                                                                 "health", "tech"]
NEWS_ROWS = [{"id": f"q{i:02d}", "topical_domain": d} for i, d in enumerate(DOMAINS)]
NEEDLE_PICKS = {
    0: ["q09", "q11", "q08", "q00", "q13", "q06"],
    7: ["q03", "q08", "q04", "q14", "q09", "q00"],
    2**63 + 12345: ["q04", "q14", "q12", "q09", "q15", "q05"],
    0xDEADBEEFCAFEF00D: ["q03", "q14", "q07", "q04", "q09", "q15"],
}


def test_stratified_sample_picks_needles_rows_for_the_same_seed() -> None:
    for seed, expected in NEEDLE_PICKS.items():
        picked = stratified_sample(NEWS_ROWS, lambda r: r["topical_domain"], 6, seed)
        assert [r["id"] for r in picked] == expected, seed


def test_stratum_seed_uses_the_64_bit_head_of_the_key_digest() -> None:
    """sha256("tech") begins fe9bbd400bb6cb31: all 8 bytes, big-endian, enter the seed."""
    assert stratum_seed(0, "tech") == 0xFE9BBD400BB6CB31
    assert stratum_seed(0xFE9BBD400BB6CB31, "tech") == 0
