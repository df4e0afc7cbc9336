"""Keenable search, modes ``pro`` (keenable) and ``realtime`` (keenable-realtime).

Shape relied on (no public API reference page was found; this is a best documented guess from
Keenable's own SDK): https://github.com/keenableai/keenable-sdk (python/keenable/client.py) and
https://docs.pipecat.ai/api-reference/server/services/knowledge-retrieval/keenable
- Request: ``POST /v1/search`` with ``X-API-Key``; without a key ``POST /v1/search/public``
  (keyless, rate limited). ``X-Keenable-Title`` names the caller (the public tier requires it).
  Body: ``query``, ``mode``, ``site`` (one domain), ``published_after`` / ``published_before``
  (YYYY-MM-DD), ``snippet_max_length``. No result-count parameter: we cut to top-K.
- Response mapped: ``results[].url``, ``.title``, ``.snippet`` (else ``.description``),
  ``.published_at``. These field names are not in a reference page (taken from SDK usage).
- Operators: a single ``site:`` → ``site``; several are dropped (the field takes one domain);
  ``after:``/``before:`` → ``published_after``/``published_before``.
- Snippet budget: ``snippet_max_length``; the SDK documents no range, so 1..10000 is a guess.
- Pipecat's docs say ``realtime`` needs a key; keyless realtime requests may be refused (the
  refusal comes back as error data).
"""

from __future__ import annotations

from typing import Any

from needle_lib.search.base import (
    EngineRequest,
    HttpSearchClient,
    join_texts,
    make_result,
    raise_api_error,
)
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult

CALLER_TITLE = "needle"


class KeenableClient(HttpSearchClient):
    default_base_url = "https://api.keenable.ai"
    snippet_budget_range = (1, 10_000)

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: dict[str, Any] = {"query": query.text, "mode": self.mode or "pro"}
        if len(query.sites) == 1:
            body["site"] = query.sites[0]
        if query.after:
            body["published_after"] = query.after.isoformat()
        if query.before:
            body["published_before"] = query.before.isoformat()
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

    def parse_results(self, payload: Any) -> list[SearchResult]:
        raise_api_error(payload, "error")
        return [
            make_result(
                r.get("url"),
                r.get("title"),
                join_texts(r.get("snippet")) or r.get("description"),
                r.get("published_at"),
            )
            for r in payload.get("results") or []
        ]
