"""Perplexity Search API (engine ``perplexity``) — the raw-results endpoint, not Sonar chat.

Shape relied on: https://docs.perplexity.ai/api-reference/search-post (and the LangChain
``PerplexitySearchResults`` docs: results carry title, url, snippet, date, last_updated).
- Request: ``POST /search`` with ``Authorization: Bearer <key>``. Body: ``query``,
  ``max_results`` (1..20), ``search_domain_filter`` (max 20 domains),
  ``search_after_date_filter`` / ``search_before_date_filter`` (``M/D/YYYY``).
- Response mapped: ``results[].url``, ``.title``, ``.snippet``, ``.date``.
- Operators: ``site:`` → ``search_domain_filter``; ``after:``/``before:`` → the date filters.
- No character snippet budget (its ``max_tokens_per_page`` counts tokens): client-side cap only.
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
from needle_lib.search.operators import ParsedQuery, us_date
from needle_lib.search.types import SearchResult

MAX_RESULTS = 20
MAX_DOMAINS = 20


class PerplexityClient(HttpSearchClient):
    default_base_url = "https://api.perplexity.ai"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: JSONObject = {"query": query.text, "max_results": min(num_results, MAX_RESULTS)}
        if query.sites:
            body["search_domain_filter"] = list(query.sites[:MAX_DOMAINS])
        if query.after:
            body["search_after_date_filter"] = us_date(query.after)
        if query.before:
            body["search_before_date_filter"] = us_date(query.before)
        headers = {"Authorization": f"Bearer {self._key()}"}
        return EngineRequest("POST", "/search", json=body, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        return each_entry(payload.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), r.get("snippet"), r.get("date")))
