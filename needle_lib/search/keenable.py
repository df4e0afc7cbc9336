"""Keenable search, modes ``pro`` (keenable) and ``realtime`` (keenable-realtime).

Shape relied on (no public API reference page was found; this is a best documented guess from
Keenable's own SDK): https://github.com/keenableai/keenable-sdk (python/keenable/client.py) and
https://docs.pipecat.ai/api-reference/server/services/knowledge-retrieval/keenable
- Request: ``POST /v1/search`` with ``X-API-Key``; without a key ``POST /v1/search/public``
  (keyless, rate limited). ``X-Keenable-Title`` names the caller (the public tier requires it).
  Body: ``query``, ``mode``, ``max_results`` (1..50, per the SDK README on PyPI),
  ``snippet_max_length`` (180..10000, the range the reference NEEDLE client clamps to).
- Response mapped: ``results[].url``, ``.title``, ``.snippet`` (else ``.description``),
  ``.published_at``. These field names are not in a reference page (taken from SDK usage).
- Operators stay in the query text as ``site:<host>`` (one per site), ``published_after:`` and
  ``published_before:`` tokens, the form the reference NEEDLE client (written by Keenable)
  sends. The body's ``site`` field takes only one domain, so a query restricted to two sites
  would silently lose its restriction there; an operators-only query still has text to send.
- Pipecat's docs say ``realtime`` needs a key; keyless realtime requests may be refused (the
  refusal comes back as error data).
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

CALLER_TITLE = "needle"
MAX_RESULTS = 50


class KeenableClient(HttpSearchClient):
    default_base_url = "https://api.keenable.ai"
    snippet_budget_range = (180, 10_000)

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        terms = [query.text, *query.site_terms()]
        if query.after:
            terms.append(f"published_after:{query.after.isoformat()}")
        if query.before:
            terms.append(f"published_before:{query.before.isoformat()}")
        body: JSONObject = {
            "query": " ".join(term for term in terms if term),
            "mode": self.mode or "pro",
            "max_results": min(num_results, MAX_RESULTS),
        }
        budget = self.snippet_budget()
        if budget is not None:
            body["snippet_max_length"] = budget
        headers = {"X-Keenable-Title": CALLER_TITLE}
        path = "/v1/search"
        if self._api_key:
            headers["X-API-Key"] = self._api_key
        else:
            path = "/v1/search/public"
        return EngineRequest("POST", path, json=body, headers=headers)

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        return each_entry(payload.get("results"), lambda r: make_result(
            r.get("url"),
            r.get("title"),
            join_texts(r.get("snippet")) or r.get("description"),
            r.get("published_at"),
        ))
