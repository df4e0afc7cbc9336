"""Octen search (engine ``octen``).

No public API reference page was found; this is a best documented guess from Octen's own
clients: the ``octen`` Python SDK README on PyPI (https://pypi.org/project/octen/) and the
official DeepSeek Harness plugin https://github.com/Octen-Team/dsh-octen (src/provider.ts).
- Request: ``POST /search`` with ``x-api-key``. Body: ``query`` (at most 500 characters,
  HTTP 400 above: longer text is cut at a word boundary), ``count`` (max 100),
  ``include_domains``, ``start_time`` / ``end_time`` (RFC 3339).
- Response: an envelope ``{code, msg, data}``; ``code`` other than 0 is an API error.
  Mapped: ``data.results[].url``, ``.title``, ``.highlight``, ``.time_published``.
- Operators: ``site:`` → ``include_domains``; ``after:``/``before:`` → ``start_time``/``end_time``.
- No snippet-length parameter is sent: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.search.base import (
    EngineError,
    EngineRequest,
    HttpSearchClient,
    each_entry,
    make_result,
)
from needle_lib.search.limits import clip_query
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult

MAX_COUNT = 100
MAX_QUERY_CHARS = 500


class OctenClient(HttpSearchClient):
    default_base_url = "https://api.octen.ai"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: dict[str, Any] = {
            "query": clip_query(query.text, max_chars=MAX_QUERY_CHARS),
            "count": min(num_results, MAX_COUNT),
        }
        if query.sites:
            body["include_domains"] = list(query.sites)
        if query.after:
            body["start_time"] = f"{query.after.isoformat()}T00:00:00Z"
        if query.before:
            body["end_time"] = f"{query.before.isoformat()}T23:59:59Z"
        return EngineRequest("POST", "/search", json=body, headers={"x-api-key": self._key()})

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        code = payload.get("code", 0)
        if code not in (0, None):
            raise EngineError(f"API error code {code}: {payload.get('msg') or ''}")
        data = payload.get("data") or {}
        return each_entry(data.get("results"), lambda r: make_result(
            r.get("url"), r.get("title"), r.get("highlight"), r.get("time_published")))
