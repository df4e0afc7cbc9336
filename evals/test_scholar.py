"""scholar: known-item paper retrieval (arXiv, Europe PMC) by title, body detail, clue, tot.

Cases are gold row × engine (``test_scholar[scholar-<query_id>-exa]``). The ``search_verdict``
fixture searches and looks for the paper's ids (arXiv id, DOI, PMID, PMCID) in the results;
the verdict is whether the paper is in the engine's top K (10 by default). recall@K, MRR@K
and ``by_bucket``/``by_age`` are in the run report under ``results/search/``.
"""

from needle_lib.plugin.fixtures import assert_verdict

BENCH = "scholar"


def test_scholar(search_case, search_verdict):
    assert_verdict(search_verdict)
