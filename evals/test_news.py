"""News search: engines ranked by an LLM relevance judge, scored with pooled nDCG@5.

Cases are gold query × engine (``test_news[news-<query_id>-exa]``). The ``search_judged``
fixture searches and judges (infrastructure: failures are ERRORs, a missing key a SKIP);
the verdict here is whether the engine put a relevant result in its top K. The headline
nDCG@5 per engine, pooled across engines, is in the run report under ``results/search/``.
"""

from needle_lib.plugin.search import check_relevance

BENCH = "news"


def test_news(search_case, search_judged, scorecard):
    check_relevance(search_judged, scorecard)
