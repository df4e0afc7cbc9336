"""agentic_rare: rare-word queries, judged exactly like news (pooled nDCG@5).

Select with ``-k agentic_rare``; queries come from ``--queries`` (the filtered artifact's
rows, stratified by ``length_bucket`` when ``--sample`` is given).
"""

from needle_lib.plugin.fixtures import assert_verdict

BENCH = "agentic_rare"


def test_agentic_rare(search_case, search_verdict):
    assert_verdict(search_verdict)
