"""Bing results via SearchApi.io (engine ``bing``).

Shape relied on: https://www.searchapi.io/docs/bing
- Request: ``GET /api/v1/search`` with ``Authorization: Bearer <key>`` (keeps the key out of
  the URL, unlike the ``api_key`` query parameter). Params: ``engine=bing``, ``q``, ``num``.
- Response mapped: ``organic_results[].link``, ``.title``, ``.snippet``, ``.date``; a 200
  body with an ``error`` field is an API error.
- Operators: ``site:`` stays in ``q`` (native Bing syntax); ``after:``/``before:`` are dropped —
  Bing has no absolute date-range operator to translate them to.
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.search.base import EngineRequest, HttpSearchClient, make_result, raise_api_error
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult


class SearchApiBingClient(HttpSearchClient):
    default_base_url = "https://www.searchapi.io"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        params = {"engine": "bing", "q": query.text_with_sites(), "num": num_results}
        headers = {"Authorization": f"Bearer {self._key()}"}
        return EngineRequest("GET", "/api/v1/search", params=params, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult]:
        raise_api_error(payload, "error")
        return [
            make_result(r.get("link"), r.get("title"), r.get("snippet"), r.get("date"))
            for r in payload.get("organic_results") or []
        ]
