"""Bing results via SearchApi.io (engine ``bing``).

Shape relied on: https://www.searchapi.io/docs/bing
- Request: ``GET /api/v1/search`` with ``Authorization: Bearer <key>`` (keeps the key out of
  the URL, unlike the ``api_key`` query parameter). Params: ``engine=bing``, ``q``, ``num``
  (at most 50, the API's maximum).
- Response mapped: ``knowledge_graph.website`` and ``answer_box.link`` first when present
  (see ``serp``), then ``organic_results[].link``, ``.title``, ``.snippet``, ``.date``.
- A 200 body with an ``error`` field is an API error. SearchApi's "Bing didn't return any
  results" (wording from the reference NEEDLE client and its tests) is an empty result only
  for a query that can legitimately find nothing, one restricted by ``site:`` or holding an
  exact phrase: there a miss is the engine's, and scoring it keeps the query in the means.
  For a plain query the message is what SearchApi says when its scrape of Bing failed (a
  plain query with no page anywhere on the web is implausible), so it stays an error, as
  in NEEDLE. NEEDLE also exempts ``after:``/``before:`` queries because it sends those
  tokens to Bing as text; we drop them (below), so Bing is asked the plain query.
- Operators: ``site:`` stays in ``q`` (native Bing syntax); ``after:``/``before:`` are dropped —
  Bing has no absolute date-range operator to translate them to.
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

import re
from typing import Any

from needle_lib.search.base import EngineRequest, HttpSearchClient, QueryParams, raise_api_error
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.serp import serp_results
from needle_lib.search.types import SearchResult

MAX_NUM = 50
_NO_RESULTS = re.compile(r"(?i)(didn.t|did not) return any results")
#: A phrase in typographic quotes, which Bing also reads as exact (the parser knows only ").
_CURLY_PHRASE = re.compile(r"“[^”]+”")


def may_find_nothing(query: ParsedQuery) -> bool:
    """Whether the query Bing is sent is narrow enough that no results is a real answer."""
    return bool(query.sites or query.phrases or _CURLY_PHRASE.search(query.text))


class SearchApiBingClient(HttpSearchClient):
    default_base_url = "https://www.searchapi.io"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        params: QueryParams = {"engine": "bing", "q": query.text_with_sites(),
                               "num": min(num_results, MAX_NUM)}
        headers = {"Authorization": f"Bearer {self._key()}"}
        return EngineRequest("GET", "/api/v1/search", params=params, headers=headers)

    def parse_answer(self, payload: Any, query: ParsedQuery) -> list[SearchResult | None]:
        if may_find_nothing(query) and _NO_RESULTS.search(str(payload.get("error") or "")):
            return []
        return self.parse_results(payload)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        return serp_results(
            payload,
            knowledge_graph="knowledge_graph",
            answer_box="answer_box",
            organic="organic_results",
        )
