"""Tavily search (engine ``tavily``); depth (its mode) from env ``TAVILY_DEPTH`` via the
registry, which checks it with ``depth_of`` when a run is configured.

Shape relied on: https://docs.tavily.com/documentation/api-reference/endpoint/search
- Request: ``POST /search`` with ``Authorization: Bearer <key>``. Body: ``query``,
  ``search_depth``, ``max_results`` (max 20), ``include_domains``, ``start_date`` /
  ``end_date`` (YYYY-MM-DD).
- Response mapped: ``results[].url``, ``.title``, ``.content``, ``.published_date``.
- Operators: ``site:`` → ``include_domains``; ``after:``/``before:`` → ``start_date``/``end_date``.
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.jsonio import JSONObject
from needle_lib.search.base import (
    EngineRequest,
    HttpSearchClient,
    each_entry,
    make_result,
    raise_api_error,
)
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult

DEPTHS = ("basic", "advanced", "fast", "ultra-fast")
DEFAULT_DEPTH = "basic"
DEPTH_ENV = "TAVILY_DEPTH"
MAX_RESULTS = 20


def depth_of(mode: str) -> str:
    """``mode`` if it is a depth Tavily knows; ValueError naming the variable and the depths."""
    if mode not in DEPTHS:
        raise ValueError(f"{DEPTH_ENV} must be one of {', '.join(DEPTHS)}; got {mode!r}")
    return mode


class TavilyClient(HttpSearchClient):
    default_base_url = "https://api.tavily.com"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.depth = depth_of(self.mode or DEFAULT_DEPTH)

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: JSONObject = {
            "query": query.text,
            "search_depth": self.depth,
            "max_results": min(num_results, MAX_RESULTS),
        }
        if query.sites:
            body["include_domains"] = list(query.sites)
        if query.after:
            body["start_date"] = query.after.isoformat()
        if query.before:
            body["end_date"] = query.before.isoformat()
        headers = {"Authorization": f"Bearer {self._key()}"}
        return EngineRequest("POST", "/search", json=body, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        return each_entry(payload.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), r.get("content"), r.get("published_date")))
