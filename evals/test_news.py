"""News search: engines ranked by an LLM relevance judge, scored with pooled nDCG@5.

Cases are gold query × engine (``test_news[news-<query_id>-exa]``). The ``search_verdict``
fixture searches and judges (infrastructure: failures are ERRORs, a missing key a SKIP);
the verdict here is whether the engine put a relevant result in its top K. The headline
nDCG@5 per engine, pooled across engines, is in the run report under ``results/search/``.
"""

from needle_lib.plugin.fixtures import assert_verdict

BENCH = "news"


def test_news(search_case, search_verdict):
    assert_verdict(search_verdict)
