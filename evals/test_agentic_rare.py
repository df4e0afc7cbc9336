"""agentic_rare: rare-word queries, judged exactly like news (pooled nDCG@5).

Select with ``-k agentic_rare``; queries come from ``--queries`` (the filtered artifact's
rows, stratified by ``length_bucket`` when ``--sample`` is given).
"""

import pytest

from needle_lib.plugin.search import relevance_verdict

BENCH = "agentic_rare"


def test_agentic_rare(search_case, search_judged, scorecard):
    passed, summary = relevance_verdict(search_judged)
    scorecard.update_case(verdict=summary)
    if not passed:
        pytest.fail(summary, pytrace=False)
