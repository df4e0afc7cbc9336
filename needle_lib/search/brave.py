"""Brave Search API (engine ``brave``).

Shape relied on: https://api-dashboard.search.brave.com/app/documentation/web-search/query
(and Brave's published skill docs: ``GET https://api.search.brave.com/res/v1/web/search``).
- Request: ``GET /res/v1/web/search`` with ``X-Subscription-Token``. Params: ``q`` (at most
  400 characters and 50 words: longer queries are clipped between words, ``site:`` terms kept
  whole), ``count`` (max 20), ``freshness`` (``YYYY-MM-DDtoYYYY-MM-DD``).
- Response mapped: ``web.results[].url``, ``.title``, ``.description``, ``.page_age``.
- Operators: ``site:`` stays in ``q`` (native); ``after:``/``before:`` → ``freshness`` range, an
  open end filled (see ``ParsedQuery.closed_range``).
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.search.base import (
    EngineRequest,
    HttpSearchClient,
    each_entry,
    make_result,
)
from needle_lib.search.limits import clip_query
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult

MAX_COUNT = 20
MAX_QUERY_WORDS = 50
MAX_QUERY_CHARS = 400


class BraveClient(HttpSearchClient):
    default_base_url = "https://api.search.brave.com"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        params: dict[str, str | int] = {
            "q": clip_query(query.text, max_words=MAX_QUERY_WORDS, max_chars=MAX_QUERY_CHARS,
                            keep=query.site_clause()),
            "count": min(num_results, MAX_COUNT),
        }
        freshness = query.closed_range()
        if freshness:
            params["freshness"] = freshness
        headers = {"Accept": "application/json", "X-Subscription-Token": self._key()}
        return EngineRequest("GET", "/res/v1/web/search", params=params, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        web = payload.get("web") or {}
        return each_entry(web.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), r.get("description"), r.get("page_age")))
