"""Parallel Search API, modes ``basic`` (parallel) and ``turbo`` (parallel-turbo).

Shape relied on: https://docs.parallel.ai/api-reference/search (and the official
``langchain-parallel`` integration, which packs filters into ``advanced_settings``).
- Request: ``POST /v1/search`` with ``x-api-key``. Body: ``search_queries``, ``mode``,
  ``advanced_settings.max_results``, ``advanced_settings.source_policy``
  (``include_domains``, ``after_date``).
- Response mapped: ``results[].url``, ``.title``, joined ``.excerpts``, ``.publish_date``; a
  body with an ``error`` field is an API error.
- Operators: ``site:`` → ``source_policy.include_domains``; ``after:`` →
  ``source_policy.after_date``; ``before:`` is dropped (no documented upper bound filter).
  The placement of ``source_policy`` under ``advanced_settings`` is our best reading of the
  GA API and is not confirmed by a reference page.
- No snippet-length parameter is sent: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.jsonio import JSONObject
from needle_lib.search.base import (
    EngineRequest,
    HttpSearchClient,
    each_entry,
    join_texts,
    make_result,
    raise_api_error,
)
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult


class ParallelClient(HttpSearchClient):
    default_base_url = "https://api.parallel.ai"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        settings: JSONObject = {"max_results": num_results}
        policy: JSONObject = {}
        if query.sites:
            policy["include_domains"] = list(query.sites)
        if query.after:
            policy["after_date"] = query.after.isoformat()
        if policy:
            settings["source_policy"] = policy
        body: JSONObject = {
            "search_queries": [query.text],
            "mode": self.mode or "basic",
            "advanced_settings": settings,
        }
        return EngineRequest("POST", "/v1/search", json=body, headers={"x-api-key": self._key()})

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        return each_entry(payload.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), join_texts(r.get("excerpts")), r.get("publish_date")))
