"""Query clipping for APIs with a query-length limit: word boundaries, the kept clause whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from needle_lib.search.limits import clip_query


def test_short_query_is_untouched() -> None:
    assert clip_query('"net income" nvidia', max_words=50, max_chars=400) == '"net income" nvidia'


def test_word_limit_counts_the_kept_clause() -> None:
    text = " ".join(f"w{i}" for i in range(60))
    clipped = clip_query(text, max_words=50, keep="(site:a.com OR site:b.org)")
    assert clipped.split() == [f"w{i}" for i in range(47)] + ["(site:a.com", "OR", "site:b.org)"]


def test_character_limit_cuts_between_words() -> None:
    assert clip_query("alpha beta gamma", max_chars=12) == "alpha beta"
    assert clip_query("alpha beta gamma", max_chars=10, keep="site:x.io") == "site:x.io"


def test_a_single_overlong_word_is_cut_rather_than_dropped() -> None:
    assert clip_query("x" * 600, max_chars=500) == "x" * 500


def test_a_quote_opened_before_the_cut_is_dropped() -> None:
    assert clip_query('rates "federal reserve minutes', max_words=3) == "rates federal reserve"
    assert clip_query('a "typo', max_words=5) == 'a "typo'  # nothing cut: left as typed


@given(st.lists(st.text(alphabet="abc\"", min_size=1, max_size=12), max_size=80),
       st.integers(min_value=1, max_value=60), st.integers(min_value=20, max_value=500))
def test_limits_always_hold_and_the_clause_survives(words, max_words, max_chars) -> None:
    keep = "site:sec.gov"
    clipped = clip_query(" ".join(words), max_words=max_words, max_chars=max_chars, keep=keep)
    assert clipped.endswith(keep)
    assert len(clipped) <= max_chars
    assert len(clipped.split()) <= max(max_words, 1)
