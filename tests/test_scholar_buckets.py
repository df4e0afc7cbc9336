"""The four scholar query buckets: title degradation, LLM answer cleaning, and every check
that keeps a body/clue/tot query honest (leaks, names, exact values, anchors, grounding)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from needle_lib.benches.scholar.buckets import (
    check_query,
    clean_answer,
    degrade_title,
    excerpt,
    prompt_messages,
    title_is_specific,
)
from needle_lib.benches.scholar.papers import Paper

PAPER = Paper(
    suite="arxiv",
    title="Tidal Lexicons: Tracking Dialect Drift in Coastal Radio Transcripts",
    abstract="We study how regional vocabulary changes across decades of BBC broadcast speech "
             "and show that lexical drift is 2.5 times faster in Hebridean fishing "
             "communities than in inland towns.",
    published=datetime(2026, 11, 27, tzinfo=UTC), url="https://arxiv.org/abs/2611.01234",
    domain="computer science", arxiv="2611.01234", authors=("Morag MacLeod", "Ian Smith"))
BODY = ("Our recordings come from the Skerryvore harbour archive, a collection of evening "
        "shipping bulletins digitised by volunteers over three decades.\n"
        "Annotators marked every occurrence of the word haar, a local term for sea fog, and "
        "matched it against the Lowland phonetic gazetteer.\n"
        "As in the abstract: lexical drift is 2.5 times faster near the sea.")


@pytest.mark.parametrize(("title", "expected"), [
    ("SmoothQuant: Accurate and Efficient Post-Training Quantization",
     "smoothquant accurate and efficient post-training quantization"),
    (r"Learning $\alpha$-Stable Laws with \textit{Deep} Nets",
     "learning stable laws with deep nets"),
    ("  Spaces,   commas; and  (parens)  ", "spaces commas and parens"),
    ("Too Short Title", None),
])
def test_titles_are_degraded_as_people_type_them(title, expected):
    assert degrade_title(title) == expected


@pytest.mark.parametrize(("title", "specific"), [
    ("A Survey of Methods", False),
    ("Deep Learning for Images", False),
    ("GPT-4 Technical Report", True),
    ("Tidal Lexicons: Tracking Dialect Drift in Coastal Radio Transcripts", True),
    ("Sparse Gradient Pruning for Low-Power Wearables", True),
])
def test_generic_titles_are_refused(title, specific):
    assert title_is_specific(title) is specific


@pytest.mark.parametrize(("answer", "query"), [
    ("skerryvore harbour archive\nExplanation: ...", "skerryvore harbour archive"),
    ('"skerryvore harbour archive"', "skerryvore harbour archive"),
    ('haar \u201csea fog\u201d bulletins', 'haar "sea fog" bulletins'),
    ('haar "sea fog bulletins', "haar sea fog bulletins"),
    ("`skerryvore archive`", "skerryvore archive"),
    ("NO_DISTINCT_QUERY", None),
    ("no_distinct_query.", None),
    ("\n  \n", None),
])
def test_llm_answers_are_cleaned_to_one_query_line(answer, query):
    assert clean_answer(answer) == query


def test_prompts_carry_the_bucket_title_abstract_and_an_excerpt_past_the_introduction():
    body = "intro " * 1000 + "DETAIL " + "rest " * 3000
    (system, user) = prompt_messages("tot", PAPER, body)
    assert system["role"] == "system" and user["role"] == "user"
    assert "Query type: tot" in user["content"] and f"Title: {PAPER.title}" in user["content"]
    assert excerpt(body) == body[len(body) // 5:][:6000] and "DETAIL" in excerpt(body)
    assert excerpt(body) in user["content"]
    assert excerpt(BODY) == BODY  # short bodies are read whole


def verdict(bucket, query):
    rejection = check_query(bucket, query, PAPER, BODY)
    return None if rejection is None else (rejection.reason, rejection.detail)


@pytest.mark.parametrize(("bucket", "query"), [
    ("body", "skerryvore harbour archive shipping bulletins"),
    ("body", 'haar "evening shipping bulletins" archive'),
    ("body", "Lowland phonetic gazetteer haar"),
    ("clue", "which study counted the word haar for sea fog in digitised evening shipping "
             "bulletins from a harbour archive?"),
    ("tot", "I think there was a paper about old radio weather broadcasts showing that "
            "words in seaside villages changed faster than in towns further inland"),
    ("tot", "Something about how seaside speech drifts. It was maybe twice as fast as "
            "in farming towns, or so I remember"),
])
def test_fair_queries_pass(bucket, query):
    assert verdict(bucket, query) is None


@pytest.mark.parametrize(("bucket", "query", "reason", "detail"), [
    # body: a detail the abstract already gives away is no full-text query
    ("body", "regional vocabulary broadcast speech fishing", "leak",
     "only 0 content word(s) not in title/abstract"),
    ("body", "hebridean fishing communities haar", "leak", "only 1 content word(s)"),
    ("body", 'haar "lexical drift is 2.5 times faster"', "leak",
     "quoted phrase is in the title/abstract"),
    ("body", "quantum annealing lattice sieve", "ungrounded", "not found in the full text"),
    ("body", 'skerryvore "harbour archive of bulletins"', "ungrounded",
     "quoted phrase not in the full text"),
    ("body", '"skerryvore harbour" "sea fog"', "shape", "2 quoted phrases"),
    ("body", "skerryvore haar", "shape", "2 words (wanted 3-12)"),
    ("body", "skerryvore archive MacLeod bulletins", "bad_anchor", "names an author: 'MacLeod'"),
    ("body", "skerryvore archive bulletins et al", "bad_anchor", "cites 'et al'"),
    ("body", "skerryvore bulletins Table 2 haar", "bad_anchor", "numbered table"),
    ("body", "skerryvore bulletins arxiv 2611.01234", "bad_anchor", "URL or an id"),
    ("body", "skerryvore bulletins supplementary haar", "bad_anchor", "supplementary"),
    # clue: same facts as a question, no quotes
    ("clue", 'which archive of "evening shipping bulletins" marked the word haar for fog?',
     "shape", "quotation marks"),
    ("clue", "which paper studies drift?", "shape", "4 words (wanted 8-45)"),
    ("clue", "which study of regional vocabulary in broadcast speech shows faster drift "
             "in fishing communities?", "leak", "not in title/abstract"),
    # tot: hedged; no names, no exact values, few title words
    ("tot", "I think it found seaside speech drifted about 2.5 times faster than in "
            "towns inland, from old weather broadcasts", "leak", "exact value '2.5'"),
    ("tot", "I think it found seaside speech drifted about 40% faster than in towns "
            "inland, from old weather broadcasts", "leak", "exact value '40%'"),
    ("tot", "a paper that tracked about 12000 old weather broadcasts and found seaside "
            "speech drifting faster than inland", "leak", "exact value '12000'"),
    ("tot", "some paper using BBC weather broadcasts that found seaside speech drifting "
            "faster than speech inland, I think", "leak", "names something: 'BBC'"),
    ("tot", "some paper on fishing villages in the Hebridean islands where speech drifted "
            "faster than inland, I believe", "leak", "names something of the paper: 'Hebridean'"),
    ("tot", "there was a paper on tracking dialect drift in coastal places and how speech "
            "changes faster near the sea", "leak", "reuses 4 title words"),
    ("tot", 'a paper about "sea fog" words in old broadcasts drifting faster than '
            "inland speech, I think", "shape", "quotation marks"),
    ("tot", "a vague memory of radio words drifting faster", "shape", "8 words"),
    ("tot", "I think Smith wrote something about seaside speech drifting faster than in "
            "inland towns, from radio", "bad_anchor", "names an author: 'Smith'"),
])
def test_unfair_queries_are_rejected_with_the_reason(bucket, query, reason, detail):
    got = verdict(bucket, query)
    assert got is not None and got[0] == reason and detail in got[1], got


def test_a_sentence_initial_capital_is_not_a_name():
    query = ("Radio bulletins, I think. Seaside speech changed faster than speech in the "
             "towns further inland")
    assert verdict("tot", query) is None
