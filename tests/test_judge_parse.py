"""Judge prompt contents and the answer parser: wrappers, coercions, mismatch policy, errors."""

from __future__ import annotations

import json

import pytest

from needle_lib.judge import JUDGE_PROMPT_VERSION, LABELS, JudgeError, build_messages, parse_verdict
from needle_lib.search.types import SearchResult

RESULT = SearchResult(
    url="https://news.example.org/2026/05/rate-cut",
    title="Central bank cuts rates by 25bp",
    snippet="The central bank lowered its key rate on Tuesday, citing cooling inflation.",
)


def answer(rating: object = 3, label: object = "HM", reasoning: object = "On topic.") -> str:
    return json.dumps({"rating": rating, "label": label, "reasoning": reasoning})


# --- prompt --------------------------------------------------------------------------------


def test_prompt_carries_the_pair_and_the_scale() -> None:
    messages = build_messages("central bank rate cut", RESULT)
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    for text in ("central bank rate cut", RESULT.url, RESULT.title, RESULT.snippet):
        assert text in user
    for rating, label in LABELS.items():
        assert f"{rating} {label} (" in system
    assert '"rating"' in system and '"label"' in system and '"reasoning"' in system
    assert "freshness" in system.lower()
    assert JUDGE_PROMPT_VERSION


def test_prompt_uses_the_snippet_as_given() -> None:
    long = SearchResult(url="https://x.org", title="t", snippet="word " * 2000)
    assert long.snippet in build_messages("q", long)[1]["content"]


def test_labels_are_the_needs_met_scale() -> None:
    assert LABELS == {0: "FailsM", 1: "SM", 2: "MM", 3: "HM", 4: "FullyM"}


# --- parsing: accepted shapes ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (answer(), (3, "HM", "On topic.")),
        (f"```json\n{answer(4, 'FullyM')}\n```", (4, "FullyM", "On topic.")),
        (f"```\n{answer(2, 'MM')}\n```", (2, "MM", "On topic.")),
        (f"Here is my rating:\n{answer(1, 'SM')}\nHope that helps.", (1, "SM", "On topic.")),
        (
            f"<think>rating 4? {{no}} maybe 2</think>\n{answer(0, 'FailsM')}",
            (0, "FailsM", "On topic."),
        ),
        (f"<THINKING>hmm</THINKING>{answer()}", (3, "HM", "On topic.")),
        (answer("3"), (3, "HM", "On topic.")),
        (answer(" 2 ", "MM"), (2, "MM", "On topic.")),
        (answer(3.0), (3, "HM", "On topic.")),
        (answer(reasoning='Uses {braces} and "quotes".'), (3, "HM", 'Uses {braces} and "quotes".')),
        (json.dumps({"rating": 2, "label": "MM"}), (2, "MM", "")),
        (answer(reasoning=["not", "text"]), (3, "HM", "")),
    ],
    ids=[
        "plain",
        "json-fence",
        "bare-fence",
        "prose-around",
        "think-block",
        "thinking-tag",
        "rating-string",
        "rating-padded-string",
        "rating-float",
        "braces-in-reasoning",
        "no-reasoning",
        "reasoning-not-text",
    ],
)
def test_parse_accepts(text: str, expected: tuple[int, str, str]) -> None:
    assert parse_verdict(text) == expected


def test_last_object_wins() -> None:
    text = f"Draft: {answer(1, 'SM')}\nOn reflection: {answer(3, 'HM')}"
    assert parse_verdict(text)[0] == 3


def test_objects_without_rating_or_label_are_skipped() -> None:
    text = f'{answer(2, "MM")}\n{{"note": "done"}}'
    assert parse_verdict(text)[:2] == (2, "MM")


# --- mismatch policy ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "label", "expected"),
    [
        (4, "SM", (4, "FullyM")),  # a valid rating wins; the label is corrected
        (0, "HM", (0, "FailsM")),
        (2, "nonsense", (2, "MM")),
        (None, "HM", (3, "HM")),  # no rating: derived from the label
        ("high", "Highly Meets", (3, "HM")),  # non-numeric rating: label, long form
        ("n/a", "fails to meet", (0, "FailsM")),
        (True, "fullym", (4, "FullyM")),  # a bool is not a rating
    ],
)
def test_rating_label_mismatch(rating: object, label: str, expected: tuple[int, str]) -> None:
    assert parse_verdict(answer(rating, label))[:2] == expected


def test_label_alone_is_enough() -> None:
    assert parse_verdict('{"label": "SM"}')[:2] == (1, "SM")


# --- parsing: failures are errors, never zeros ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (answer(5, "FullyM"), "not on the 0-4"),
        (answer(-1, "FailsM"), "not on the 0-4"),
        (answer("7", "HM"), "not on the 0-4"),
        (answer(2.5, "MM"), "not on the 0-4"),
        ("The result is highly relevant.", "no JSON object"),
        ("", "no JSON object"),
        ('{"score": 3}', "no JSON object"),
        ('{"rating": 3, "label": "HM"', "no JSON object"),
        (answer(None, "great"), "neither rating"),
        ("<think>The rating should be", "unclosed think"),
    ],
    ids=[
        "rating-5",
        "rating-negative",
        "rating-string-7",
        "rating-fraction",
        "prose-only",
        "empty",
        "wrong-key",
        "truncated-json",
        "nothing-usable",
        "unclosed-think",
    ],
)
def test_parse_rejects(text: str, message: str) -> None:
    with pytest.raises(JudgeError, match=message):
        parse_verdict(text)


def test_parse_error_quotes_a_bounded_excerpt() -> None:
    with pytest.raises(JudgeError) as info:
        parse_verdict("no verdict here " * 100)
    assert "no verdict here" in str(info.value)
    assert len(str(info.value)) < 300
