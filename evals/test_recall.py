"""Positional recall: reproduce the first N body lines of a named function, verbatim.

Cases are collected from ``configs/corpora`` × sampled targets × ``--model`` (ids like
``test_recall[jquery-val-qwen36-35b]``). The request is sent by the ``recall_answer``
fixture, so a server failure is an ERROR; the verdict is decided here, so a recall miss is
a FAILED with the coloured line diff as its message.
"""

import pytest

from needle_lib.contract.outcome import NOTHING_TO_SCORE, Outcome, scored_outcome
from needle_lib.recall.results import score_fields
from needle_lib.report.terminal import explain_case


def test_recall(recall_case, recall_answer, scorecard):
    score = recall_case.score(recall_answer.content)
    scorecard.update_case(**score_fields(score))
    diff = [line.to_json() for line in score.diff]
    scorecard.set_detail("diff", diff)
    outcome = scored_outcome(score.scored, score.passed)
    if outcome is Outcome.SKIPPED:
        pytest.skip(NOTHING_TO_SCORE)
    if outcome is Outcome.FAILED:
        pytest.fail(explain_case(scorecard.case, diff, color=scorecard.color), pytrace=False)
