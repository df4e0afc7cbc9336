"""Octen search (engine ``octen``).

Shape relied on: https://docs.octen.ai/api-reference/search (its OpenAPI page), with the
``highlight`` object's fields and defaults from Octen's own CLI skill reference
(https://github.com/Octen-Team/octen-cli, ``skills/octen-search/SKILL.md``).
- Request: ``POST /search`` with ``x-api-key``. Body: ``query`` (at most 500 characters,
  HTTP 400 above: longer text is cut at a word boundary), ``count`` (max 100),
  ``include_domains``, ``start_time`` / ``end_time`` (RFC 3339), ``highlight``.
- Response: an envelope ``{code, msg, data}``; ``code`` other than 0 is an API error.
  Mapped: ``data.results[].url``, ``.title``, ``.highlight``, ``.time_published``.
- Operators: ``site:`` → ``include_domains``; ``after:``/``before:`` → ``start_time``/``end_time``.
- Snippet: ``highlight`` (query-relevant passages) is what a result carries as evidence.
  Octen documents highlights as on by default (``enable: true``, ``max_tokens`` 512, range
  100–20000); we ask for them explicitly all the same, as the reference NEEDLE client does,
  so a changed server default cannot empty every snippet, and size them from
  ``--snippet-chars`` (``highlight_tokens``). Uncapped (0), the server's default length.
"""

from __future__ import annotations

from typing import Any

from needle_lib.jsonio import JSONObject
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
#: ``highlight.max_tokens`` bounds Octen documents.
HIGHLIGHT_TOKENS = (100, 20_000)
#: Characters a highlight token is taken to hold when the snippet budget (characters) is
#: turned into tokens: three, under English prose's four, so the budget errs toward more text
#: than the cap keeps (the cap then cuts, top-ranked passages first) rather than less.
CHARS_PER_TOKEN = 3


def highlight_tokens(snippet_chars: int) -> int | None:
    """``highlight.max_tokens`` for a snippet budget in characters (None: uncapped)."""
    if not snippet_chars:
        return None
    low, high = HIGHLIGHT_TOKENS
    return min(max(-(-snippet_chars // CHARS_PER_TOKEN), low), high)


class OctenClient(HttpSearchClient):
    default_base_url = "https://api.octen.ai"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        highlight: JSONObject = {"enable": True}
        tokens = highlight_tokens(self.snippet_chars)
        if tokens is not None:
            highlight["max_tokens"] = tokens
        body: JSONObject = {
            "query": clip_query(query.text, max_chars=MAX_QUERY_CHARS),
            "count": min(num_results, MAX_COUNT),
            "highlight": highlight,
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
