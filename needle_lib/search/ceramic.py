"""Ceramic search (engine ``ceramic``): a lexical index built for LLM agents.

No public API reference page was found; this is a best documented guess from Ceramic's own
AI SDK tool (https://github.com/CeramicTeam/ceramic-ai-sdk, src/tool.ts: ``maxDescriptionLength``
1000–8000, response ``result.results[]`` with title/url/description) and Cloudflare's Web
Search provider page (https://developers.cloudflare.com/web-search/providers/). The endpoint
path ``POST /search`` and Bearer auth are assumptions.
- Request: ``POST /search`` with ``Authorization: Bearer <key>``. Body: ``query`` (1..50
  words; the API answers 422 above, so the first 50 words are sent), ``maxDescriptionLength``.
  No result-count parameter: we cut to top-K.
- Response mapped: ``result.results[].url``, ``.title``, ``.description``; no date field.
- Operators: none documented, so ``site:``/``after:``/``before:`` are all dropped.
- Snippet budget: ``maxDescriptionLength``, clamped to 1000..8000.
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
from needle_lib.search.limits import clip_query
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult

MAX_QUERY_WORDS = 50


class CeramicClient(HttpSearchClient):
    default_base_url = "https://api.ceramic.ai"
    snippet_budget_range = (1000, 8000)

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: JSONObject = {"query": clip_query(query.text, max_words=MAX_QUERY_WORDS)}
        budget = self.snippet_budget()
        if budget is not None:
            body["maxDescriptionLength"] = budget
        headers = {"Authorization": f"Bearer {self._key()}"}
        return EngineRequest("POST", "/search", json=body, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        result = payload.get("result") or {}
        return each_entry(result.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), r.get("description")))
