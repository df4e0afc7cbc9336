"""Positional recall: reproduce the first N body lines of a named function, verbatim.

Cases are collected from ``configs/corpora`` × sampled targets × ``--model`` (ids like
``test_recall[jquery-val-qwen36-35b]``). The ``recall_verdict`` fixture sends the request
and scores the answer (``recall.benchmark``), so a server failure is an ERROR; the verdict
is asserted here, so a recall miss is a FAILED with the coloured line diff as its message.
"""

from needle_lib.plugin.fixtures import assert_verdict


def test_recall(recall_case, recall_verdict):
    assert_verdict(recall_verdict)
