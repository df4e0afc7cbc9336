"""The oracle through the real prompt and scorer scores 100 % on arbitrary real code.

Needle's own source is a corpus full of what trips a naive answer cleaner: literal
``<think>`` tags, markdown fences inside docstrings, lines that read like commentary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from needle_lib.paths import REPO_ROOT
from needle_lib.recall.corpus import CorpusConfig, ScoringPolicy, load_corpus
from needle_lib.recall.extract import parse_corpus
from needle_lib.recall.prompt import build_messages
from needle_lib.recall.reference import reference_answer
from needle_lib.recall.score import clean_answer, score_answer
from needle_lib.recall.targets import find_targets

SOURCES = sorted((REPO_ROOT / "needle_lib").rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_reference_answers_score_perfectly(path: Path):
    corpus = load_corpus(CorpusConfig(path.stem, path.parent, path.name, limit=1))
    parsed = parse_corpus(corpus)
    lines = corpus.lines
    for target in find_targets(parsed, primary_lines=12).eligible:
        answer = reference_answer(build_messages(corpus, target))
        score = score_answer(answer, target.window(lines), target.window_kinds(parsed.kinds),
                             target.bonus_window(lines), ScoringPolicy())
        assert (score.matched, score.hallucinated) == (score.scored, 0), target.case_id


def test_literal_think_tags_and_inner_fences_are_answer_text():
    body = ['    text = text.replace("<think>", "")', '    """Example:', "", "    ```py",
            "    x = 1", "    ```", '    """', '    return text.split("</think>")']
    assert clean_answer("\n".join(body)) == body
    assert clean_answer("<think>recall it</think>\n" + "\n".join(body)) == body
    fenced = "Here are the lines:\n```python\n" + "\n".join(body[:2]) + "\n```\nDone."
    assert clean_answer(fenced) == body[:2]
