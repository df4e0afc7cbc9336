"""legal: known-item cases and regulations (a published opinion by its caption, a CFR
section by its substance).

Cases are gold row × engine (``test_legal[legal-<query_id>-exa]``). The ``search_verdict``
fixture searches and matches the gold ids (cluster, reporter citation, CFR section, docket
next to a party name); the verdict is whether one is in the engine's top K. recall@K,
MRR@K and ``by_suite``/``by_syntax``/``by_court`` are in the run report under
``results/search/``.
"""

from needle_lib.plugin.fixtures import assert_verdict

BENCH = "legal"


def test_legal(search_case, search_verdict):
    assert_verdict(search_verdict)
