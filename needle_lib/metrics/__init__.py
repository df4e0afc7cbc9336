"""Ranking and summary metrics: pooled nDCG@K (``ndcg``), URL identity (``urls``), latency,
engine overlap, bootstrap intervals (known-item recall/MRR are in ``benches.known_item``,
where the hit rank is decided).

Nothing is re-exported here: recall runs use ``bootstrap`` (the effective context length)
and must not import the search metrics, whose imports reach the judge and the engines.
"""
