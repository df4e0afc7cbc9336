"""Google results via Serper (engine ``google``).

Shape relied on: https://serper.dev (API playground) and the documented wrappers built on it
(LangChain ``GoogleSerperAPIWrapper``; lc-tools ``hosted_search/serper.rs`` on docs.rs).
- Request: ``POST /search`` with ``X-API-KEY``. Body: ``q``, ``num`` (at most 100, the
  API's maximum), ``gl`` (country, two letters) and ``hl`` (interface language), optional
  ``tbs``.
- Locale: ``gl=us``, ``hl=en`` unless ``SERPER_LOCALE`` (the engine's mode, ``<gl>/<hl>``,
  e.g. ``de/de`` or ``br/pt-br``) says otherwise. Without them Serper answers in the
  account's default locale, so two accounts (or one whose setting changed) would rank
  different pages for the same query; pinning it makes runs comparable with each other and
  with the reference NEEDLE client, which sends ``us``/``en``.
- Response mapped: ``knowledgeGraph.website`` and ``answerBox.link`` first when present (see
  ``serp``), then ``organic[].link``, ``.title``, ``.snippet``, ``.date``.
- Operators: ``site:`` stays in ``q`` (Google syntax is native); ``after:``/``before:`` become
  Google's custom date range ``tbs=cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY``.
- No snippet-length parameter: snippets are only capped client-side.
"""

from __future__ import annotations

import re
from typing import Any

from needle_lib.jsonio import JSONObject
from needle_lib.search.base import EngineRequest, HttpSearchClient
from needle_lib.search.operators import ParsedQuery, us_date
from needle_lib.search.serp import serp_results
from needle_lib.search.types import SearchResult

MAX_NUM = 100
DEFAULT_LOCALE = "us/en"
LOCALE_ENV = "SERPER_LOCALE"
#: ``<country>/<language>``: Google's two-letter ``gl`` and its ``hl`` codes (``en``, ``pt-br``).
_LOCALE = re.compile(r"^([a-z]{2})/([a-z]{2,3}(?:-[a-z]{2,4})?)$")


def locale_of(mode: str) -> str:
    """``mode`` as a locale, lowercased (``DE/de`` and ``de/de`` are one setup); ValueError
    naming the variable and the form otherwise."""
    locale = mode.lower()
    if _LOCALE.match(locale) is None:
        raise ValueError(f"{LOCALE_ENV} must be <country>/<language> such as us/en or "
                         f"br/pt-br; got {mode!r}")
    return locale


class SerperClient(HttpSearchClient):
    default_base_url = "https://google.serper.dev"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.country, self.language = locale_of(self.mode or DEFAULT_LOCALE).split("/")

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        body: JSONObject = {"q": query.text_with_sites(), "num": min(num_results, MAX_NUM),
                                "gl": self.country, "hl": self.language}
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
