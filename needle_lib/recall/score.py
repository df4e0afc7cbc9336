"""Scoring policy for recall answers: what counts, what does not, and why.

- **Blank lines never earn credit.** Reproducing whitespace shows no recall; blanks are
  excluded from numerator and denominator, and from the alignment too: only non-blank lines
  are aligned, so adding or removing blank lines in an answer cannot move any credit (a
  blank pairing used to decide between equal content matches, e.g. window vs bonus copy).
- **Re-indented lines are not hallucinations.** Right content with different leading
  whitespace is labelled ``reindented``: a miss under strict scoring, credited under
  ``relax_indent``, and never counted twice (missing *and* hallucinated). Like every count,
  it covers only lines that can earn credit (no comments under ``count_comments=False``).
- **Comments and docstrings count by default** (verbatim prose cannot be inferred from the
  code around it), but every score reports the code / prose split; ``count_comments=False``
  scores code only.
- **Pass is a ratio**: matched / scored ≥ 40 % (8 of 20 on an all-code window).

Any change to these rules must bump ``SCORER_VERSION``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from needle_lib.contract.records import Composition
from needle_lib.recall.corpus import ScoringPolicy, split_lines
from needle_lib.recall.extract import BLANK, CODE, PROSE_KINDS

SCORER_VERSION = "needle-score-6"
PASS_THRESHOLD = Fraction(2, 5)

# Line statuses, in the diff and the dumps.
MATCHED, MISSING, REINDENTED = "matched", "missing", "reindented"
HALLUCINATED, BONUS, INELIGIBLE = "hallucinated", "bonus", "ineligible"

_LEADING_THINK = re.compile(r"\s*<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"\s*<think>", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENTARY = re.compile(
    r"^(here (is|are)\b|sure\b|certainly\b|okay\b|of course\b|below (is|are)\b|"
    r"the (first|following|requested|next) \d*\s*lines?\b|these are\b|i hope\b|"
    r"let me know\b|note:|output:|answer:)",
    re.IGNORECASE,
)


def _strip_reasoning(text: str) -> str:
    """Drop reasoning that precedes the answer: leading ``<think>…</think>`` blocks, or the
    text up to a line ending in ``</think>`` (left by a prefilled think turn).

    Only reasoning *before* the answer is removed: source code may itself contain the
    literal text ``<think>`` (a scorer quoting it, say), and that is part of the answer.
    """
    while match := _LEADING_THINK.match(text):
        text = text[match.end() :]
    if _OPEN_THINK.match(text):
        return ""  # unterminated reasoning: no answer after it
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.rstrip().lower().endswith("</think>"):
            return "\n".join(lines[index + 1 :])
    return text


def clean_answer(text: str) -> list[str]:
    """The lines a model meant as its answer.

    Drops leading reasoning, takes the fenced block when the answer opens with one (after
    any commentary), and trims commentary lines around the code. Commentary starts at
    column 0: body lines are indented, and an indented ``output: list = []`` or ``Note: ...``
    docstring line is part of the answer. A fence deeper in the answer is source text (a
    docstring showing markdown), not packaging. Leading and trailing blank lines go too:
    blanks never earn credit, so trimming them cannot change a score.
    """
    lines = split_lines(_strip_reasoning(text).replace("\r\n", "\n"))
    opening = next((i for i, line in enumerate(lines)
                    if line.strip() and not _COMMENTARY.match(line)), None)
    if opening is not None and _FENCE.match(lines[opening]):
        close = next(
            (i for i in range(opening + 1, len(lines)) if _FENCE.match(lines[i])), len(lines)
        )
        lines = lines[opening + 1 : close]
    else:
        while lines and (not lines[0].strip() or _COMMENTARY.match(lines[0])):
            lines.pop(0)
        while lines and (not lines[-1].strip() or _COMMENTARY.match(lines[-1])):
            lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


@dataclass(frozen=True)
class DiffLine:
    status: str
    text: str
    kind: str = ""  # the expected line's kind; "" for answer-only lines

    def to_json(self) -> list[str]:
        return [self.status, self.text, self.kind]


@dataclass
class Score:
    matched: int
    scored: int
    hallucinated: int
    reindented: int
    bonus: int
    missing: int
    composition: Composition
    diff: list[DiffLine] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.matched / self.scored if self.scored else 0.0

    @property
    def passed(self) -> bool:
        return self.scored > 0 and Fraction(self.matched, self.scored) >= PASS_THRESHOLD

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("diff")
        data["ratio"] = round(self.ratio, 6)
        data["passed"] = self.passed
        return data


def _lcs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Longest common subsequence of two line lists; ties go to the earliest pairs."""
    rows, cols = len(a), len(b)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        row, below = table[i], table[i + 1]
        ai = a[i]
        for j in range(cols - 1, -1, -1):
            if ai == b[j]:
                row[j] = below[j + 1] + 1
            else:
                row[j] = below[j] if below[j] >= row[j + 1] else row[j + 1]
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < rows and j < cols:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _align(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Align the non-blank lines of ``a`` and ``b``; blank lines take no part.

    Leaving blanks out is what makes adding or removing them score-neutral: a blank pairing
    can neither pick which copy of a repeated line is matched nor split the gaps in which
    re-indented lines are paired.
    """
    ia = [i for i, line in enumerate(a) if line.strip()]
    jb = [j for j, line in enumerate(b) if line.strip()]
    return [(ia[x], jb[y]) for x, y in _lcs([a[i] for i in ia], [b[j] for j in jb])]


def _reindented_pairs(
    answer: list[str], window: list[str], pairs: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Within each gap between aligned lines, pair unmatched lines equal up to indentation."""
    found: list[tuple[int, int]] = []
    bounds = [(-1, -1), *pairs, (len(answer), len(window))]
    for (a0, w0), (a1, w1) in itertools.pairwise(bounds):
        gap_a = [i for i in range(a0 + 1, a1) if answer[i].strip()]
        gap_w = [j for j in range(w0 + 1, w1) if window[j].strip()]
        if not gap_a or not gap_w:
            continue
        sub = _lcs([answer[i].strip() for i in gap_a], [window[j].strip() for j in gap_w])
        found.extend((gap_a[x], gap_w[y]) for x, y in sub)
    return found


def score_answer(
    answer: str,
    expected: list[str],
    kinds: list[str],
    bonus: list[str],
    policy: ScoringPolicy,
) -> Score:
    """Score ``answer`` against the primary window ``expected`` (with line ``kinds``) and
    the ``bonus`` lines that follow it."""
    lines = clean_answer(answer)
    window = expected + bonus
    strict = [line.rstrip() for line in window]
    relaxed = [line.strip() for line in window]
    got_strict = [line.rstrip() for line in lines]
    if policy.relax_indent:
        aligned = _align([line.strip() for line in lines], relaxed)
        reindent = {(i, j) for i, j in aligned if got_strict[i] != strict[j]}
        pairs = [p for p in aligned if p not in reindent]
    else:
        pairs = _align(got_strict, strict)
        reindent = set(_reindented_pairs(lines, window, pairs))
    credited = {j for _, j in pairs} | ({j for _, j in reindent} if policy.relax_indent else set())
    reindented_w = {j for _, j in reindent}
    used_answer = {i for i, _ in pairs} | {i for i, _ in reindent}

    def scoreable(kind: str) -> bool:
        return kind == CODE or (policy.count_comments and kind in PROSE_KINDS)

    counts = {"code": [0, 0], "prose": [0, 0]}
    matched = scored = missing = reindented = 0
    status_of: dict[int, str] = {}
    for j, kind in enumerate(kinds):
        if kind == BLANK:
            status_of[j] = INELIGIBLE
            continue
        bucket = counts["code" if kind == CODE else "prose"]
        bucket[1] += 1
        hit = j in credited
        bucket[0] += hit
        if not scoreable(kind):
            status_of[j] = INELIGIBLE if hit else MISSING
            continue
        scored += 1
        matched += hit
        if j in reindented_w:
            reindented += 1  # only lines that can earn credit: a comment under code-only is not
            status_of[j] = REINDENTED if not hit else MATCHED
        elif hit:
            status_of[j] = MATCHED
        else:
            missing += 1
            status_of[j] = MISSING
    bonus_count = sum(1 for _, j in [*pairs, *reindent] if j >= len(expected) and strict[j])
    hallucinated = sum(1 for i, line in enumerate(lines) if i not in used_answer and line.strip())
    (code_matched, code_total), (prose_matched, prose_total) = counts["code"], counts["prose"]
    composition: Composition = {"code": {"matched": code_matched, "total": code_total},
                                "prose": {"matched": prose_matched, "total": prose_total},
                                "blank_skipped": kinds.count(BLANK)}
    diff = _diff(lines, window, len(expected), kinds, sorted([*pairs, *reindent]), status_of,
                 {i for i, _ in reindent})
    return Score(matched, scored, hallucinated, reindented, bonus_count, missing, composition, diff)


def _diff(
    lines: list[str],
    window: list[str],
    primary: int,
    kinds: list[str],
    pairs: list[tuple[int, int]],
    status_of: dict[int, str],
    reindented_answer: set[int],
) -> list[DiffLine]:
    """Expected and answer lines merged in order, each with its status."""
    out: list[DiffLine] = []
    i = j = 0
    for pi, pj in [*pairs, (len(lines), len(window))]:
        while j < pj:
            if j < primary:
                out.append(DiffLine(status_of[j], window[j], kinds[j]))
            j += 1
        while i < pi:
            if lines[i].strip():
                out.append(DiffLine(HALLUCINATED, lines[i]))
            i += 1
        if pi < len(lines) and pj < len(window):
            if pj >= primary:
                if window[pj].strip():
                    out.append(DiffLine(BONUS, lines[pi]))
            elif pi in reindented_answer and status_of[pj] != MATCHED:
                out.append(DiffLine(REINDENTED, lines[pi], kinds[pj]))
            else:
                out.append(DiffLine(status_of[pj], lines[pi], kinds[pj]))
            i, j = pi + 1, pj + 1
    return out
