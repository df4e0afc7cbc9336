"""You.com Search API (engine ``you``).

Shape relied on: https://docs.you.com/get-started/quickstart and
https://you.com/resources/you-com-web-search-api (``POST https://ydc-index.io/v1/search``).
- Request: ``POST /v1/search`` with ``X-API-Key``. Body: ``query``, ``count``,
  ``include_domains``, ``freshness`` (``YYYY-MM-DDtoYYYY-MM-DD``).
- Response mapped: ``results.web[]`` then ``results.news[]`` (deduplicated by URL):
  ``.url``, ``.title``, joined ``.snippets`` (else ``.description``), ``.page_age``.
- Operators: ``site:`` → ``include_domains``; ``after:``/``before:`` → ``freshness`` range, an
  open end filled (see ``ParsedQuery.closed_range``).
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

from collections.abc import Mapping
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

MAX_COUNT = 100


class YouClient(HttpSearchClient):
    default_base_url = "https://ydc-index.io"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: JSONObject = {"query": query.text, "count": min(num_results, MAX_COUNT)}
        if query.sites:
            body["include_domains"] = list(query.sites)
        freshness = query.closed_range()
        if freshness:
            body["freshness"] = freshness
        return EngineRequest("POST", "/v1/search", json=body, headers={"X-API-Key": self._key()})

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        raise_api_error(payload, "error")
        sections = payload.get("results") or {}
        seen: set[str] = set()
        results: list[SearchResult | None] = []
        hits = [*each_entry(sections.get("web"), _hit), *each_entry(sections.get("news"), _hit)]
        for hit in hits:
            if hit is not None and hit.url:
                if hit.url in seen:
                    continue
                seen.add(hit.url)
            results.append(hit)
        return results


def _hit(hit: Mapping[str, Any]) -> SearchResult:
    snippet = join_texts(hit.get("snippets")) or hit.get("description")
    return make_result(hit.get("url"), hit.get("title"), snippet, hit.get("page_age"))
