"""finance: known-item answers (CEO, founding year, LEI, quarterly net income, a filing…).

Cases are gold row × engine (``test_finance[finance-<query_id>-exa]``). The ``search_verdict``
fixture searches and matches the gold (``--judge`` adds the LLM backstop); the verdict is
whether the gold is in the engine's top K. recall@K, MRR@K and the breakdowns are in the
run report under ``results/search/``.
"""

from needle_lib.plugin.fixtures import assert_verdict

BENCH = "finance"


def test_finance(search_case, search_verdict):
    assert_verdict(search_verdict)
