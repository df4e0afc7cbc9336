"""The scoring policy: properties over generated windows, and the seed defect regressions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needle_lib.recall.corpus import ScoringPolicy
from needle_lib.recall.extract import BLANK, CODE, COMMENT, DOCSTRING
from needle_lib.recall.score import (
    HALLUCINATED,
    INELIGIBLE,
    MATCHED,
    MISSING,
    REINDENTED,
    Score,
    clean_answer,
    score_answer,
)
from needle_lib.report.terminal import composition_line

STRICT = ScoringPolicy()
RELAXED = ScoringPolicy(relax_indent=True)
CODE_ONLY = ScoringPolicy(count_comments=False)
INDENTS = ["", "\t", "\t\t", "    ", "        "]


@dataclass(frozen=True)
class Window:
    lines: list[str]
    kinds: list[str]
    bonus: list[str]

    def score(self, answer: str | list[str], policy: ScoringPolicy = STRICT) -> Score:
        text = answer if isinstance(answer, str) else "\n".join(answer)
        return score_answer(text, self.lines, self.kinds, self.bonus, policy)

    @property
    def non_blank(self) -> int:
        return sum(kind != BLANK for kind in self.kinds)


def counts(score: Score) -> dict:
    return score.to_json()


# --- strategies -------------------------------------------------------------------------

_word = st.text(alphabet="abcdxyz", min_size=1, max_size=3)
_code = st.one_of(
    st.builds("{} = {}( {} );".format, _word, _word, st.integers(0, 99)),
    st.sampled_from(["}", "return x;", "} else {", "break;"]),
)
_comment = st.builds("// {}".format, _word)
_blank = st.sampled_from(["", "", "  ", "\t"])
_indent = st.sampled_from(INDENTS)
_line = st.one_of(
    st.tuples(st.builds("{}{}".format, _indent, _code), st.just(CODE)),
    st.tuples(st.builds("{}{}".format, _indent, _comment), st.just(COMMENT)),
    st.tuples(_blank, st.just(BLANK)),
)


@st.composite
def windows(draw: st.DrawFn, *, unique: bool = False, bonus: bool = True) -> Window:
    """A primary window of code / comment / blank lines, and bonus lines after it.

    ``unique``: no two non-blank lines (window and bonus) share their stripped text, so
    re-indenting one can never make it equal to another.
    """
    pairs = draw(st.lists(_line, min_size=1, max_size=14))
    if not any(kind != BLANK for _, kind in pairs):
        pairs.append((draw(_code), CODE))
    extra = draw(st.lists(_line, max_size=5)) if bonus else []
    if unique:
        seen: set[str] = set()

        def fresh(text: str, kind: str) -> bool:
            if kind == BLANK:
                return True
            new = text.strip() not in seen
            seen.add(text.strip())
            return new

        pairs = [(text, kind) for text, kind in pairs if fresh(text, kind)]
        extra = [(text, kind) for text, kind in extra if fresh(text, kind)]
    lines = [text for text, _ in pairs]
    kinds = [kind for _, kind in pairs]
    return Window(lines, kinds, [text for text, _ in extra])


def reindent(line: str, indent: str) -> str:
    return indent + line.lstrip()


@st.composite
def reindented_answers(draw: st.DrawFn) -> tuple[Window, list[str], int]:
    """A window and a perfect answer with k of its non-blank lines re-indented."""
    window = draw(windows(unique=True, bonus=False))
    candidates = [i for i, kind in enumerate(window.kinds) if kind != BLANK]
    chosen = draw(st.sets(st.sampled_from(candidates), max_size=len(candidates)))
    answer = list(window.lines)
    for i in chosen:
        current = answer[i][: len(answer[i]) - len(answer[i].lstrip())]
        other = draw(st.sampled_from([x for x in [*INDENTS, " "] if x != current]))
        answer[i] = reindent(answer[i], other)
    return window, answer, len(chosen)


@st.composite
def imperfect_answers(draw: st.DrawFn) -> tuple[Window, list[str]]:
    """A window and an answer that drops, re-indents, invents and overruns lines."""
    window = draw(windows())
    answer: list[str] = []
    for line in [*window.lines, *window.bonus[: draw(st.integers(0, len(window.bonus)))]]:
        action = draw(st.sampled_from(["keep", "keep", "drop", "reindent", "invent"]))
        if action == "keep":
            answer.append(line)
        elif action == "reindent" and line.strip():
            answer.append(reindent(line, draw(st.sampled_from(INDENTS))))
        elif action == "invent":
            answer.extend([line, f"invented_{draw(_word)}();"])
    return window, answer


def without_blanks(lines: list[str]) -> list[str]:
    return [line for line in lines if line.strip()]


@st.composite
def with_blanks(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """``lines`` with blank lines removed, then blank lines inserted anywhere."""
    out = without_blanks(lines)
    for _ in range(draw(st.integers(0, 6))):
        out.insert(draw(st.integers(0, len(out))), draw(_blank))
    return out


# --- properties -------------------------------------------------------------------------


@given(windows())
def test_a_perfect_answer_scores_100_percent(window: Window) -> None:
    for policy in (STRICT, RELAXED):
        score = window.score(window.lines, policy)
        assert score.matched == score.scored == window.non_blank
        assert score.ratio == 1.0 and score.passed
        assert (score.hallucinated, score.reindented, score.missing, score.bonus) == (0, 0, 0, 0)
        assert {line.status for line in score.diff} <= {MATCHED, INELIGIBLE}


@given(windows(), st.data())
def test_bonus_lines_are_counted(window: Window, data: st.DataObject) -> None:
    taken = window.bonus[: data.draw(st.integers(0, len(window.bonus)))]
    score = window.score([*window.lines, *taken])
    assert score.bonus == len(without_blanks(taken))
    assert score.matched == score.scored and score.hallucinated == 0


@settings(max_examples=150)
@given(imperfect_answers(), st.data())
def test_adding_or_removing_blank_lines_changes_no_count(case, data: st.DataObject) -> None:
    window, answer = case
    shuffled = data.draw(with_blanks(answer))
    for policy in (STRICT, RELAXED, CODE_ONLY):
        assert counts(window.score(shuffled, policy)) == counts(window.score(answer, policy))


@settings(max_examples=120)
@given(reindented_answers())
def test_reindented_lines_are_labelled_not_hallucinated(case) -> None:
    window, answer, k = case
    strict = window.score(answer)
    assert (strict.reindented, strict.hallucinated) == (k, 0)
    assert strict.matched == strict.scored - k
    assert strict.missing == 0  # a re-indented line is not also counted missing
    relaxed = window.score(answer, RELAXED)
    assert relaxed.matched == relaxed.scored and relaxed.ratio == 1.0
    assert (relaxed.reindented, relaxed.hallucinated) == (k, 0)


@given(windows(), st.sampled_from(["js", "python", ""]), st.sampled_from(["```", "~~~"]))
def test_a_fenced_answer_scores_as_the_unfenced_one(window: Window, lang: str, fence: str):
    plain = "\n".join(window.lines)
    fenced = f"Here are the lines:\n\n{fence}{lang}\n{plain}\n{fence}\nHope that helps!"
    assert counts(window.score(fenced)) == counts(window.score(plain))


@given(windows())
def test_reasoning_and_commentary_are_ignored(window: Window) -> None:
    plain = "\n".join(window.lines)
    wrapped = [
        f"<think>\nThe function is {window.lines[0]!r}.\n{plain}\n</think>\n{plain}",
        f"I should recall it first.\n{window.lines[-1]}\n</think>\n\n{plain}",
        f"Here are the {len(window.lines)} lines:\n{plain}\nLet me know if you need more.",
        f"Sure! Below are the lines.\n\n{plain}\n\nNote: indentation preserved.",
    ]
    expected = counts(window.score(plain))
    for answer in wrapped:
        assert counts(window.score(answer)) == expected, answer


@given(windows(unique=True), st.integers(1, 5))
def test_invented_lines_are_hallucinations(window: Window, invented: int) -> None:
    answer = [*window.lines, *(f"invented_{n}();" for n in range(invented))]
    score = window.score(answer)
    assert score.hallucinated == invented
    assert score.matched == score.scored
    assert [line.text for line in score.diff if line.status == HALLUCINATED] == answer[
        len(window.lines) :
    ]


# --- deterministic cases ----------------------------------------------------------------

ALL_CODE = Window([f"\tx{n} = f( {n} );" for n in range(20)], [CODE] * 20, [])


@pytest.mark.parametrize(("given_lines", "passed"), [(8, True), (7, False), (20, True)])
def test_the_pass_threshold_is_a_ratio(given_lines: int, passed: bool) -> None:
    score = ALL_CODE.score(ALL_CODE.lines[:given_lines])
    assert (score.matched, score.scored, score.passed) == (given_lines, 20, passed)
    small = Window(ALL_CODE.lines[:10], [CODE] * 10, [])
    assert small.score(small.lines[:4]).passed  # 4/10 = 40 %: a fixed 8 would fail it
    assert not small.score(small.lines[:3]).passed


def test_an_empty_answer_fails() -> None:
    score = ALL_CODE.score("")
    assert (score.matched, score.missing, score.passed) == (0, 20, False)
    assert clean_answer("") == []


MIXED = Window(
    ["\tcode_a();", "\t// comment a", "", '\t"""doc a"""', "\tcode_b();", "\t// comment b", ""],
    [CODE, COMMENT, BLANK, DOCSTRING, CODE, COMMENT, BLANK],
    [],
)


def test_comments_count_by_default_and_not_under_count_comments_false() -> None:
    prose_only = [MIXED.lines[i] for i in (1, 3, 5)]
    default = MIXED.score(prose_only)
    assert (default.matched, default.scored, default.missing) == (3, 5, 2)
    code_only = MIXED.score(prose_only, CODE_ONLY)
    assert (code_only.matched, code_only.scored, code_only.missing) == (0, 2, 2)
    assert not code_only.passed and default.passed
    assert code_only.composition == default.composition
    assert code_only.hallucinated == default.hallucinated == 0


def test_reindented_counts_only_lines_that_earn_credit_under_the_policy() -> None:
    shifted = ["  " + line.strip() if line.strip() else line for line in MIXED.lines]
    default = MIXED.score(shifted)
    assert (default.reindented, default.scored, default.matched) == (5, 5, 0)
    code_only = MIXED.score(shifted, CODE_ONLY)
    assert (code_only.reindented, code_only.scored, code_only.missing) == (2, 2, 0)
    assert code_only.matched + code_only.reindented + code_only.missing == code_only.scored


def test_composition_counts() -> None:
    score = MIXED.score([MIXED.lines[0], MIXED.lines[1], "\twrong();", MIXED.lines[5]])
    assert score.composition == {
        "code": {"matched": 1, "total": 2},
        "prose": {"matched": 2, "total": 3},
        "blank_skipped": 2,
    }
    assert composition_line(score.composition) == (
        "composition: code 1/2 · prose 2/3 · 2 blank skipped"
    )
    assert score.hallucinated == 1


# --- seed defect regressions ------------------------------------------------------------


def test_seed_a_blank_lines_earn_no_credit() -> None:
    lines = [line for n in range(10) for line in (f"\tstep_{n}();", "")]
    window = Window(lines, [CODE, BLANK] * 10, [])
    blanks_only = window.score(["" for _ in lines])
    assert (blanks_only.matched, blanks_only.scored) == (0, 10)
    assert blanks_only.composition["blank_skipped"] == 10
    garbled = window.score([line if not line else "\twrong();" for line in lines])
    assert (garbled.matched, garbled.scored, garbled.ratio) == (0, 10, 0.0)
    assert not garbled.passed  # blank lines used to make this 10/20 = a pass


def test_seed_b_reindented_lines_are_neither_hallucinated_nor_double_counted() -> None:
    answer = list(ALL_CODE.lines)
    answer[3] = "        x3 = f( 3 );"
    score = ALL_CODE.score(answer)
    assert (score.matched, score.reindented, score.hallucinated, score.missing) == (19, 1, 0, 0)
    assert score.matched + score.reindented + score.missing == score.scored
    statuses = [line.status for line in score.diff]
    assert statuses.count(REINDENTED) == 1 and HALLUCINATED not in statuses
    assert MISSING not in statuses
    assert ALL_CODE.score(answer, RELAXED).matched == 20


def test_indented_body_lines_that_read_like_commentary_are_kept() -> None:
    window = Window(
        ["        Note: the first line of the request is parsed here.", '        """',
         "        output: list[str] = []", "        answer: int = 42"],
        [DOCSTRING, DOCSTRING, CODE, CODE],
        [],
    )
    score = window.score(window.lines)
    assert (score.matched, score.scored, score.hallucinated) == (4, 4, 0)
    assert clean_answer("Note: unindented lines around the answer are commentary.\n"
                        + "\n".join(window.lines) + "\nOutput: as requested.") == window.lines
