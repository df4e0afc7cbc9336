"""agentic_rare: rare-word queries, judged exactly like news (pooled nDCG@5).

Select with ``-k agentic_rare``; queries come from ``--queries`` (the filtered artifact's
rows, stratified by ``length_bucket`` when ``--sample`` is given).
"""

from needle_lib.plugin.search import check_relevance

BENCH = "agentic_rare"


def test_agentic_rare(search_case, search_judged, scorecard):
    check_relevance(search_judged, scorecard)
