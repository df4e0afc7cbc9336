"""Google/Bing result pages as SERP APIs (Serper, SearchApi) return them.

A results page leads with the knowledge-graph card's website and the answer box's source link
when it has them; a user sees those first, and the reference NEEDLE ranks them first too. Only
the organic list would rank a different, usually weaker, page list than the engine shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from needle_lib.search.base import hits, make_result
from needle_lib.search.types import SearchResult


def serp_results(
    payload: Any, *, knowledge_graph: str, answer_box: str, organic: str
) -> list[SearchResult]:
    """Knowledge-graph website, then answer-box link, then the organic results, in order."""
    results: list[SearchResult] = []
    card = payload.get(knowledge_graph)
    if isinstance(card, Mapping) and card.get("website"):
        results.append(make_result(card["website"], card.get("title"), card.get("description")))
    box = payload.get(answer_box)
    if isinstance(box, Mapping) and box.get("link"):
        results.append(make_result(box["link"], box.get("title"), box.get("snippet")))
    results.extend(
        make_result(r.get("link"), r.get("title"), r.get("snippet"), r.get("date"))
        for r in hits(payload.get(organic))
    )
    return results
