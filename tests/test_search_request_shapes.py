"""What each engine client sends, captured through ``httpx.MockTransport``: URL, auth header,
and the params or body for a plain, a long, an operator-only, a multi-site and a dated query.

The tables are the documented request shapes (see each engine module's docstring); a change
in what goes over the wire shows up here as a one-line diff.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fakeclock import PINNED_NOW

from needle_lib.search import ENGINES, make_engine

KEY = "sk-shape-KEY"
TODAY = PINNED_NOW.date().isoformat()  # an open range ends on the (pinned) day

# 80 words, 550 characters: over Brave's 50 words, Octen's 500 characters, Ceramic's 50 words.
LONG_WORDS = [f"term{i}" for i in range(80)]
QUERIES = {
    "plain": "nvidia quarterly net income",
    "long": " ".join(LONG_WORDS) + " site:sec.gov",
    "ops-only": "site:sec.gov after:2025-01-01",
    "multi-site": "fed minutes site:federalreserve.gov site:reuters.com",
    "dated": "ecb rate decision after:2025-01-01 before:2025-03-31",
}


def head(words: int) -> str:
    """The first ``words`` words of the long query."""
    return " ".join(LONG_WORDS[:words])


LONG = head(80)
MULTI = ["federalreserve.gov", "reuters.com"]

# engine -> (method, URL, auth header, auth value)
ENDPOINTS = {
    "keenable": ("POST", "https://api.keenable.ai/v1/search", "X-API-Key", KEY),
    "exa": ("POST", "https://api.exa.ai/search", "x-api-key", KEY),
    "google": ("POST", "https://google.serper.dev/search", "X-API-KEY", KEY),
    "bing": ("GET", "https://www.searchapi.io/api/v1/search", "Authorization", f"Bearer {KEY}"),
    "brave": ("GET", "https://api.search.brave.com/res/v1/web/search", "X-Subscription-Token",
              KEY),
    "parallel": ("POST", "https://api.parallel.ai/v1/search", "x-api-key", KEY),
    "tavily": ("POST", "https://api.tavily.com/search", "Authorization", f"Bearer {KEY}"),
    "perplexity": ("POST", "https://api.perplexity.ai/search", "Authorization", f"Bearer {KEY}"),
    "octen": ("POST", "https://api.octen.ai/search", "x-api-key", KEY),
    "ceramic": ("POST", "https://api.ceramic.ai/search", "Authorization", f"Bearer {KEY}"),
    "you": ("POST", "https://ydc-index.io/v1/search", "X-API-Key", KEY),
}
# Mode variants send the same shape with another mode value.
MODE_VARIANTS = {
    "keenable-realtime": ("keenable", "mode", "realtime"),
    "exa-instant": ("exa", "type", "instant"),
    "parallel-turbo": ("parallel", "mode", "turbo"),
}


def _keenable(query: str) -> dict[str, Any]:
    return {"query": query, "mode": "pro", "max_results": 5, "snippet_max_length": 300}


def _exa(query: str, **extra: Any) -> dict[str, Any]:
    return {"query": query, "type": "auto", "numResults": 5,
            "contents": {"highlights": {"maxCharacters": 300}}, **extra}


def _google(q: str, **extra: Any) -> dict[str, Any]:
    return {"q": q, "num": 5, "gl": "us", "hl": "en", **extra}


def _octen(query: str, **extra: Any) -> dict[str, Any]:
    return {"query": query, "count": 5, "highlight": {"enable": True, "max_tokens": 100},
            **extra}


def _parallel(query: str, **policy: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {"max_results": 5}
    if policy:
        settings["source_policy"] = policy
    return {"search_queries": [query], "mode": "basic", "advanced_settings": settings}


START, END = "2025-01-01T00:00:00.000Z", "2025-03-31T23:59:59.999Z"

SHAPES: dict[str, dict[str, dict[str, Any]]] = {
    "keenable": {
        "plain": _keenable("nvidia quarterly net income"),
        "long": _keenable(f"{LONG} site:sec.gov"),
        "ops-only": _keenable("site:sec.gov published_after:2025-01-01"),
        "multi-site": _keenable("fed minutes site:federalreserve.gov site:reuters.com"),
        "dated": _keenable(
            "ecb rate decision published_after:2025-01-01 published_before:2025-03-31"),
    },
    "exa": {
        "plain": _exa("nvidia quarterly net income"),
        "long": _exa(LONG, includeDomains=["sec.gov"]),
        "ops-only": _exa("", includeDomains=["sec.gov"], startPublishedDate=START),
        "multi-site": _exa("fed minutes", includeDomains=MULTI),
        "dated": _exa("ecb rate decision", startPublishedDate=START, endPublishedDate=END),
    },
    "google": {  # the locale pinned to us/en unless SERPER_LOCALE says otherwise
        "plain": _google("nvidia quarterly net income"),
        "long": _google(f"{LONG} site:sec.gov"),
        "ops-only": _google("site:sec.gov", tbs="cdr:1,cd_min:1/1/2025"),
        "multi-site": _google("fed minutes (site:federalreserve.gov OR site:reuters.com)"),
        "dated": _google("ecb rate decision", tbs="cdr:1,cd_min:1/1/2025,cd_max:3/31/2025"),
    },
    "bing": {
        "plain": {"engine": "bing", "q": "nvidia quarterly net income", "num": "5"},
        "long": {"engine": "bing", "q": f"{LONG} site:sec.gov", "num": "5"},
        "ops-only": {"engine": "bing", "q": "site:sec.gov", "num": "5"},
        "multi-site": {"engine": "bing",
                       "q": "fed minutes (site:federalreserve.gov OR site:reuters.com)",
                       "num": "5"},
        "dated": {"engine": "bing", "q": "ecb rate decision", "num": "5"},
    },
    "brave": {
        "plain": {"q": "nvidia quarterly net income", "count": "5"},
        "long": {"q": f"{head(49)} site:sec.gov", "count": "5"},  # 50 words with the site
        "ops-only": {"q": "site:sec.gov", "count": "5", "freshness": f"2025-01-01to{TODAY}"},
        "multi-site": {"q": "fed minutes (site:federalreserve.gov OR site:reuters.com)",
                       "count": "5"},
        "dated": {"q": "ecb rate decision", "count": "5",
                  "freshness": "2025-01-01to2025-03-31"},
    },
    "parallel": {
        "plain": _parallel("nvidia quarterly net income"),
        "long": _parallel(LONG, include_domains=["sec.gov"]),
        "ops-only": _parallel("", include_domains=["sec.gov"], after_date="2025-01-01"),
        "multi-site": _parallel("fed minutes", include_domains=MULTI),
        "dated": _parallel("ecb rate decision", after_date="2025-01-01"),
    },
    "tavily": {
        "plain": {"query": "nvidia quarterly net income", "search_depth": "basic",
                  "max_results": 5},
        "long": {"query": LONG, "search_depth": "basic", "max_results": 5,
                 "include_domains": ["sec.gov"]},
        "ops-only": {"query": "", "search_depth": "basic", "max_results": 5,
                     "include_domains": ["sec.gov"], "start_date": "2025-01-01"},
        "multi-site": {"query": "fed minutes", "search_depth": "basic", "max_results": 5,
                       "include_domains": MULTI},
        "dated": {"query": "ecb rate decision", "search_depth": "basic", "max_results": 5,
                  "start_date": "2025-01-01", "end_date": "2025-03-31"},
    },
    "perplexity": {
        "plain": {"query": "nvidia quarterly net income", "max_results": 5},
        "long": {"query": LONG, "max_results": 5, "search_domain_filter": ["sec.gov"]},
        "ops-only": {"query": "", "max_results": 5, "search_domain_filter": ["sec.gov"],
                     "search_after_date_filter": "1/1/2025"},
        "multi-site": {"query": "fed minutes", "max_results": 5, "search_domain_filter": MULTI},
        "dated": {"query": "ecb rate decision", "max_results": 5,
                  "search_after_date_filter": "1/1/2025",
                  "search_before_date_filter": "3/31/2025"},
    },
    "octen": {  # highlights asked for; 300 snippet chars = 100 tokens (Octen's minimum)
        "plain": _octen("nvidia quarterly net income"),
        "long": _octen(head(73), include_domains=["sec.gov"]),  # 500 chars
        "ops-only": _octen("", include_domains=["sec.gov"], start_time="2025-01-01T00:00:00Z"),
        "multi-site": _octen("fed minutes", include_domains=MULTI),
        "dated": _octen("ecb rate decision", start_time="2025-01-01T00:00:00Z",
                        end_time="2025-03-31T23:59:59Z"),
    },
    "ceramic": {  # no operators in its API: dropped; 300 snippet chars raised to the minimum
        "plain": {"query": "nvidia quarterly net income", "maxDescriptionLength": 1000},
        "long": {"query": head(50), "maxDescriptionLength": 1000},
        "ops-only": {"query": "", "maxDescriptionLength": 1000},
        "multi-site": {"query": "fed minutes", "maxDescriptionLength": 1000},
        "dated": {"query": "ecb rate decision", "maxDescriptionLength": 1000},
    },
    "you": {
        "plain": {"query": "nvidia quarterly net income", "count": 5},
        "long": {"query": LONG, "count": 5, "include_domains": ["sec.gov"]},
        "ops-only": {"query": "", "count": 5, "include_domains": ["sec.gov"],
                     "freshness": f"2025-01-01to{TODAY}"},
        "multi-site": {"query": "fed minutes", "count": 5, "include_domains": MULTI},
        "dated": {"query": "ecb rate decision", "count": 5,
                  "freshness": "2025-01-01to2025-03-31"},
    },
}


async def capture(engine: str, query: str, *, num_results: int = 5,
                  snippet_chars: int = 300, env: dict[str, str] | None = None) -> httpx.Request:
    """The one request ``engine`` sends for ``query`` (answered with an empty 200 JSON body)."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={})

    env = {ENGINES[engine].key_env: KEY} if env is None else env
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http, make_engine(
        engine, env=env, snippet_chars=snippet_chars, client=http
    ) as client:
        outcome = await client.search(query, num_results=num_results)
    assert outcome.ok, outcome.error
    (request,) = sent
    return request


def sent_fields(request: httpx.Request) -> dict[str, Any]:
    if request.method == "GET":
        return dict(request.url.params)
    return json.loads(request.content)


def test_tables_cover_every_engine_and_query_kind() -> None:
    assert set(SHAPES) | set(MODE_VARIANTS) == set(ENGINES)
    assert set(SHAPES) == set(ENDPOINTS)
    for engine, table in SHAPES.items():
        assert set(table) == set(QUERIES), engine


@pytest.mark.parametrize("kind", sorted(QUERIES))
@pytest.mark.parametrize("engine", sorted(SHAPES))
async def test_request_shape(engine: str, kind: str) -> None:
    method, url, header, value = ENDPOINTS[engine]
    request = await capture(engine, QUERIES[kind])
    assert request.method == method
    assert str(request.url.copy_with(query=None)) == url
    assert request.headers[header] == value
    assert sent_fields(request) == SHAPES[engine][kind]


@pytest.mark.parametrize("variant", sorted(MODE_VARIANTS))
async def test_mode_variants_differ_only_in_mode(variant: str) -> None:
    base, field, mode = MODE_VARIANTS[variant]
    request = await capture(variant, QUERIES["multi-site"])
    assert str(request.url.copy_with(query=None)) == ENDPOINTS[base][1]
    assert sent_fields(request) == {**SHAPES[base]["multi-site"], field: mode}


# --- limits the APIs document ---------------------------------------------------------------

@pytest.mark.parametrize(("engine", "field", "cap"), [
    ("google", "num", 100), ("bing", "num", 50), ("brave", "count", 20),
    ("keenable", "max_results", 50), ("tavily", "max_results", 20),
    ("perplexity", "max_results", 20), ("octen", "count", 100), ("you", "count", 100),
])
async def test_result_count_capped_at_the_api_maximum(engine: str, field: str, cap: int) -> None:
    request = await capture(engine, "gpu prices", num_results=500)
    assert int(sent_fields(request)[field]) == cap


async def test_brave_query_clipped_to_400_characters_keeping_sites() -> None:
    words = [f"semiconductor{i:02d}" for i in range(40)]  # 40 words, 599 characters
    request = await capture("brave", " ".join(words) + " site:a.com site:b.org")
    q = request.url.params["q"]
    assert len(q) <= 400
    assert q.endswith(" (site:a.com OR site:b.org)")
    assert q == " ".join(words[:23]) + " (site:a.com OR site:b.org)"  # 367 + 27 characters


@pytest.mark.parametrize(("locale", "gl", "hl"), [("de/de", "de", "de"),
                                                  ("BR/pt-BR", "br", "pt-br")])
async def test_google_locale_from_serper_locale(locale: str, gl: str, hl: str) -> None:
    request = await capture("google", "gpu prices",
                            env={"SERPER_API_KEY": KEY, "SERPER_LOCALE": locale})
    assert json.loads(request.content) == {"q": "gpu prices", "num": 5, "gl": gl, "hl": hl}


async def test_octen_trims_at_a_word_boundary() -> None:
    request = await capture("octen", "x" * 7 + " " + "y" * 600)
    assert json.loads(request.content)["query"] == "x" * 7


@pytest.mark.parametrize(("snippet_chars", "sent"), [(50, 180), (2000, 2000), (50_000, 10_000)])
async def test_keenable_snippet_budget_clamped_to_180_10000(snippet_chars: int, sent: int) -> None:
    request = await capture("keenable", "gpu prices", snippet_chars=snippet_chars)
    assert json.loads(request.content)["snippet_max_length"] == sent


async def test_keenable_keyless_sends_tokens_to_the_public_endpoint() -> None:
    request = await capture("keenable", QUERIES["multi-site"], env={})
    assert request.url.path == "/v1/search/public"
    assert "X-API-Key" not in request.headers
    assert request.headers["X-Keenable-Title"] == "needle"
    assert json.loads(request.content)["query"] == SHAPES["keenable"]["multi-site"]["query"]


@pytest.mark.parametrize(("snippet_chars", "highlight"), [
    (50, {"enable": True, "max_tokens": 100}),  # Octen's minimum
    (2000, {"enable": True, "max_tokens": 667}),  # the default cap, at 3 characters a token
    (100_000, {"enable": True, "max_tokens": 20_000}),  # Octen's maximum
    (0, {"enable": True}),  # uncapped: the server's default length
])
async def test_octen_asks_for_highlights_sized_from_the_snippet_budget(
        snippet_chars: int, highlight: dict[str, Any]) -> None:
    request = await capture("octen", "gpu prices", snippet_chars=snippet_chars)
    assert json.loads(request.content)["highlight"] == highlight


async def test_exa_uncapped_asks_for_full_text() -> None:
    request = await capture("exa", "gpu prices", snippet_chars=0)
    assert json.loads(request.content)["contents"] == {"text": True}


@pytest.mark.parametrize("engine", sorted(ENGINES))
async def test_blank_query_sends_nothing(engine: str) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"{engine} sent a request for a blank query")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as http, make_engine(
        engine, env={ENGINES[engine].key_env: KEY}, client=http
    ) as client:
        outcome = await client.search("   ", num_results=5)
    assert outcome.error == f"{engine}: empty query: nothing to search for (no request sent)"


async def test_site_path_sends_the_host_and_non_operators_stay_text() -> None:
    request = await capture("exa", "edgar site:sec.gov/cgi-bin/x site:gov after:yesterday")
    body = json.loads(request.content)
    assert body["includeDomains"] == ["sec.gov"]
    assert body["query"] == "edgar site:gov after:yesterday"
    assert "startPublishedDate" not in body
