"""Judge and profile prompts and their answer parsers: wrappers, coercions, mismatch
policy, gates, the evidence cut, errors."""

from __future__ import annotations

import json
from datetime import date

import pytest

from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.profile import QueryProfile, parse_profile
from needle_lib.judge.prompt import (
    JUDGE_PROMPT_VERSION,
    MAX_EVIDENCE_CHARS,
    build_messages,
    cut_evidence,
)
from needle_lib.judge.verdict import GATES, LABELS, JudgeError
from needle_lib.search.types import SearchResult

TODAY = date(2026, 5, 12)

RESULT = SearchResult(
    url="https://news.example.org/2026/05/rate-cut",
    title="Central bank cuts rates by 25bp",
    snippet="The central bank lowered its key rate on Tuesday, citing cooling inflation.",
)


def answer(rating: object = 3, label: object = "HM", reasoning: object = "On topic.") -> str:
    return json.dumps({"rating": rating, "label": label, "reasoning": reasoning})


# --- prompt --------------------------------------------------------------------------------


def test_prompt_carries_the_pair_the_date_the_profile_and_the_scale() -> None:
    profile = QueryProfile("specific", "financial", (), ("the rate decision",), (), "ephemeral")
    messages = build_messages("central bank rate cut", RESULT, today=TODAY, profile=profile)
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    for text in ("central bank rate cut", RESULT.url, RESULT.title, RESULT.snippet,
                 "Today's date: 2026-05-12", '"published": "not given"', '"the rate decision"'):
        assert text in user
    for rating, label in LABELS.items():
        assert f"{rating} {label} (" in system
    for key in ("rating", "label", "reasoning", *GATES):
        assert f'"{key}"' in system
    assert "freshness" in system.lower()
    assert JUDGE_PROMPT_VERSION == "needs-met-v3"


def test_evidence_within_the_budget_is_shown_as_given() -> None:
    assert cut_evidence("short text", 2000) == "short text"
    long = SearchResult(url="https://x.org", title="t", snippet="word " * 2000)
    assert long.snippet in build_messages("q", long, today=TODAY)[1]["content"]


def test_evidence_beyond_the_budget_says_how_much_was_left_out() -> None:
    assert cut_evidence("one two three four five", 8) == (
        "one two  [… 3 more words (15 characters) not shown]"
    )
    huge = "x" * (MAX_EVIDENCE_CHARS + 10)
    assert cut_evidence(huge, 0).endswith("[… 1 more words (10 characters) not shown]")


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
    verdict = parse_verdict(text)
    assert (verdict.rating, verdict.label, verdict.reasoning) == expected


def test_gates_are_recorded_lowercased_and_only_when_given() -> None:
    text = json.dumps({"reasoning": "Old season.", "integrity": "PASS", "freshness": "fail",
                       "staleness": " Fail ", "operators": "", "rating": 1, "label": "SM"})
    assert parse_verdict(text).gates == {"integrity": "pass", "freshness": "fail",
                                         "staleness": "fail"}
    assert parse_verdict(answer()).gates == {}


# --- profile -------------------------------------------------------------------------------

PROFILE = {"query_type": "List", "query_domain": "Financial", "main_aspects": ["a", "b", "c", "d"],
           "aux_aspects": "e", "content_archetype": "persistent"}


def test_profile_parse_normalises_and_adds_parsed_operators() -> None:
    profile = parse_profile(f"```json\n{json.dumps(PROFILE)}\n```", 'apple ceo site:apple.com')
    assert profile == QueryProfile("list", "financial", ("site:apple.com",), ("a", "b", "c"),
                                   ("e",), "persistent")
    assert QueryProfile.from_json(profile.to_json()) == profile


def test_profile_with_an_unknown_domain_is_other() -> None:
    assert parse_profile(json.dumps({**PROFILE, "query_domain": "sports"}), "q").query_domain == (
        "other"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"query_type": "vague"}, "query_type"),
        ({"content_archetype": None}, "content_archetype"),
        ({"main_aspects": []}, "no main_aspects"),
    ],
)
def test_profile_parse_rejects(change: dict, message: str) -> None:
    with pytest.raises(JudgeError, match=message):
        parse_profile(json.dumps({**PROFILE, **change}), "q")
    with pytest.raises(JudgeError, match="no JSON object with a query_type"):
        parse_profile("It is a list query.", "q")


def test_last_object_wins() -> None:
    text = f"Draft: {answer(1, 'SM')}\nOn reflection: {answer(3, 'HM')}"
    assert parse_verdict(text).rating == 3


def test_objects_without_rating_or_label_are_skipped() -> None:
    text = f'{answer(2, "MM")}\n{{"note": "done"}}'
    assert parse_verdict(text).label == "MM"


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
    verdict = parse_verdict(answer(rating, label))
    assert (verdict.rating, verdict.label) == expected


def test_label_alone_is_enough() -> None:
    assert parse_verdict('{"label": "SM"}').rating == 1


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


def test_a_stored_profile_reads_back_and_a_wrong_shape_names_the_field() -> None:
    profile = QueryProfile("specific", "news", ('"exact phrase"',), ("storm",), (), "ephemeral")
    assert QueryProfile.from_json(profile.to_json()) == profile
    with pytest.raises(ValueError, match=r"Expected `array`, got `str` - at `\$.main_aspects`"):
        QueryProfile.from_json(profile.to_json().replace('["storm"]', '"storm"'))
