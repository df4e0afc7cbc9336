"""Google results via Serper (engine ``google``).

Shape relied on: https://serper.dev (API playground) and the documented wrappers built on it
(LangChain ``GoogleSerperAPIWrapper``; lc-tools ``hosted_search/serper.rs`` on docs.rs).
- Request: ``POST /search`` with ``X-API-KEY``. Body: ``q``, ``num`` (at most 100, the
  API's maximum), optional ``tbs``.
- Response mapped: ``knowledgeGraph.website`` and ``answerBox.link`` first when present (see
  ``serp``), then ``organic[].link``, ``.title``, ``.snippet``, ``.date``.
- Operators: ``site:`` stays in ``q`` (Google syntax is native); ``after:``/``before:`` become
  Google's custom date range ``tbs=cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY``.
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

from typing import Any

from needle_lib.search.base import EngineRequest, HttpSearchClient
from needle_lib.search.operators import ParsedQuery, us_date
from needle_lib.search.serp import serp_results
from needle_lib.search.types import SearchResult

MAX_NUM = 100


class SerperClient(HttpSearchClient):
    default_base_url = "https://google.serper.dev"

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: dict[str, Any] = {"q": query.text_with_sites(), "num": min(num_results, MAX_NUM)}
        if query.has_dates:
            parts = ["cdr:1"]
            if query.after:
                parts.append(f"cd_min:{us_date(query.after)}")
            if query.before:
                parts.append(f"cd_max:{us_date(query.before)}")
            body["tbs"] = ",".join(parts)
        return EngineRequest("POST", "/search", json=body, headers={"X-API-KEY": self._key()})

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        return serp_results(
            payload, knowledge_graph="knowledgeGraph", answer_box="answerBox", organic="organic"
        )
