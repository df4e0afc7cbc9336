"""Every engine client against respx: request shape, operator translation, snippet budget,
response mapping from the documented sample payloads, and errors returned as data."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from needle_lib.search import ENGINES, SearchResult, make_engine

PAYLOADS = Path(__file__).parent / "payloads" / "search"
KEY = "sk-test-SECRET-4242"
QUERY = '"net income" nvidia site:sec.gov after:2025-01-01 before:2025-03-31'
TEXT = '"net income" nvidia'
GOOGLE_TEXT = '"net income" nvidia site:sec.gov'
# One TLS context for every test client: building one per client costs ~40 ms (respx intercepts
# all requests, so nothing ever handshakes).
TLS = ssl.create_default_context()

# engine -> (payload file, method, url, auth header, auth value, expected body or params)
CASES: dict[str, tuple[str, str, str, str, str, dict[str, Any]]] = {
    "keenable": (
        "keenable", "POST", "https://api.keenable.ai/v1/search", "X-API-Key", KEY,
        {"query": TEXT, "mode": "pro", "site": "sec.gov", "published_after": "2025-01-01",
         "published_before": "2025-03-31", "snippet_max_length": 300},
    ),
    "keenable-realtime": (
        "keenable", "POST", "https://api.keenable.ai/v1/search", "X-API-Key", KEY,
        {"query": TEXT, "mode": "realtime", "site": "sec.gov", "published_after": "2025-01-01",
         "published_before": "2025-03-31", "snippet_max_length": 300},
    ),
    "exa": (
        "exa", "POST", "https://api.exa.ai/search", "x-api-key", KEY,
        {"query": TEXT, "type": "auto", "numResults": 5,
         "contents": {"text": {"maxCharacters": 300}}, "includeDomains": ["sec.gov"],
         "startPublishedDate": "2025-01-01T00:00:00.000Z",
         "endPublishedDate": "2025-03-31T23:59:59.999Z"},
    ),
    "exa-instant": (
        "exa", "POST", "https://api.exa.ai/search", "x-api-key", KEY,
        {"query": TEXT, "type": "instant", "numResults": 5,
         "contents": {"text": {"maxCharacters": 300}}, "includeDomains": ["sec.gov"],
         "startPublishedDate": "2025-01-01T00:00:00.000Z",
         "endPublishedDate": "2025-03-31T23:59:59.999Z"},
    ),
    "google": (
        "google", "POST", "https://google.serper.dev/search", "X-API-KEY", KEY,
        {"q": GOOGLE_TEXT, "num": 5, "tbs": "cdr:1,cd_min:1/1/2025,cd_max:3/31/2025"},
    ),
    "bing": (
        "bing", "GET", "https://www.searchapi.io/api/v1/search", "Authorization", f"Bearer {KEY}",
        {"engine": "bing", "q": GOOGLE_TEXT, "num": "5"},
    ),
    "brave": (
        "brave", "GET", "https://api.search.brave.com/res/v1/web/search",
        "X-Subscription-Token", KEY,
        {"q": GOOGLE_TEXT, "count": "5", "freshness": "2025-01-01to2025-03-31"},
    ),
    "parallel": (
        "parallel", "POST", "https://api.parallel.ai/v1/search", "x-api-key", KEY,
        {"search_queries": [TEXT], "mode": "basic",
         "advanced_settings": {"max_results": 5, "source_policy": {
             "include_domains": ["sec.gov"], "after_date": "2025-01-01"}}},
    ),
    "parallel-turbo": (
        "parallel", "POST", "https://api.parallel.ai/v1/search", "x-api-key", KEY,
        {"search_queries": [TEXT], "mode": "turbo",
         "advanced_settings": {"max_results": 5, "source_policy": {
             "include_domains": ["sec.gov"], "after_date": "2025-01-01"}}},
    ),
    "tavily": (
        "tavily", "POST", "https://api.tavily.com/search", "Authorization", f"Bearer {KEY}",
        {"query": TEXT, "search_depth": "basic", "max_results": 5,
         "include_domains": ["sec.gov"], "start_date": "2025-01-01", "end_date": "2025-03-31"},
    ),
    "perplexity": (
        "perplexity", "POST", "https://api.perplexity.ai/search", "Authorization",
        f"Bearer {KEY}",
        {"query": TEXT, "max_results": 5, "search_domain_filter": ["sec.gov"],
         "search_after_date_filter": "1/1/2025", "search_before_date_filter": "3/31/2025"},
    ),
    "octen": (
        "octen", "POST", "https://api.octen.ai/search", "x-api-key", KEY,
        {"query": TEXT, "count": 5, "include_domains": ["sec.gov"],
         "start_time": "2025-01-01T00:00:00Z", "end_time": "2025-03-31T23:59:59Z"},
    ),
    "ceramic": (
        "ceramic", "POST", "https://api.ceramic.ai/search", "Authorization", f"Bearer {KEY}",
        {"query": TEXT, "maxDescriptionLength": 1000},  # 300 clamped up to the API minimum
    ),
    "you": (
        "you", "POST", "https://ydc-index.io/v1/search", "X-API-Key", KEY,
        {"query": TEXT, "count": 5, "include_domains": ["sec.gov"],
         "freshness": "2025-01-01to2025-03-31"},
    ),
}


def _payload(name: str) -> dict[str, Any]:
    return json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))


def _env(engine: str) -> dict[str, str]:
    return {ENGINES[engine].key_env: KEY}


async def _no_sleep(_: float) -> None:
    return None


async def _search(engine: str, *, snippet_chars: int = 300, env: dict[str, str] | None = None,
                  num_results: int = 5):
    async with httpx.AsyncClient(verify=TLS) as http, make_engine(
        engine, snippet_chars=snippet_chars, env=_env(engine) if env is None else env,
        sleep=_no_sleep, timeout=5.0, client=http,
    ) as client:
        return await client.search(QUERY, num_results=num_results)


def test_every_registered_engine_has_a_case() -> None:
    assert set(CASES) == set(ENGINES)


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_request_shape(engine: str) -> None:
    payload_name, method, url, header, value, expected = CASES[engine]
    with respx.mock:
        route = respx.request(method, url).mock(
            return_value=httpx.Response(200, json=_payload(payload_name)["response"])
        )
        outcome = await _search(engine)
    assert outcome.ok, outcome.error
    request = route.calls.last.request
    assert request.headers[header] == value
    if method == "GET":
        assert dict(request.url.params) == expected
    else:
        assert json.loads(request.content) == expected


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_response_mapping(engine: str) -> None:
    payload_name, method, url, *_ = CASES[engine]
    payload = _payload(payload_name)
    with respx.mock:
        respx.request(method, url).mock(return_value=httpx.Response(200, json=payload["response"]))
        outcome = await _search(engine, snippet_chars=0)
    assert outcome.results == tuple(SearchResult(**row) for row in payload["expected"])
    assert outcome.latency_s >= 0


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_snippets_capped_uniformly_and_top_k(engine: str) -> None:
    payload_name, method, url, *_ = CASES[engine]
    payload = _payload(payload_name)
    with respx.mock:
        respx.request(method, url).mock(return_value=httpx.Response(200, json=payload["response"]))
        outcome = await _search(engine, snippet_chars=12, num_results=2)
    assert [r.snippet for r in outcome.results] == [
        row["snippet"][:12] for row in payload["expected"][:2]
    ]


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_no_snippet_budget_sent_when_uncapped(engine: str) -> None:
    _, method, url, *_ = CASES[engine]
    with respx.mock:
        route = respx.request(method, url).mock(return_value=httpx.Response(200, json={}))
        await _search(engine, snippet_chars=0)
    sent = route.calls.last.request
    text = sent.url.query.decode() + sent.content.decode()
    for field in ("snippet_max_length", "maxCharacters", "maxDescriptionLength"):
        assert field not in text


async def test_keenable_keyless_uses_public_endpoint_without_key_header() -> None:
    with respx.mock:
        route = respx.post("https://api.keenable.ai/v1/search/public").mock(
            return_value=httpx.Response(200, json=_payload("keenable")["response"])
        )
        outcome = await _search("keenable", env={})
    assert outcome.ok
    assert "X-API-Key" not in route.calls.last.request.headers
    assert route.calls.last.request.headers["X-Keenable-Title"] == "needle"


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_operators_never_sent_as_literal_tokens(engine: str) -> None:
    _, method, url, *_ = CASES[engine]
    with respx.mock:
        route = respx.request(method, url).mock(return_value=httpx.Response(200, json={}))
        await _search(engine)
    sent = route.calls.last.request
    text = (sent.url.query.decode() + " " + sent.content.decode()).replace("%3A", ":")
    assert "after:" not in text and "before:" not in text
    native_site = engine in {"google", "bing", "brave"}
    assert ("site:" in text) == native_site


async def test_exa_without_budget_asks_for_full_text() -> None:
    with respx.mock:
        route = respx.post("https://api.exa.ai/search").mock(
            return_value=httpx.Response(200, json={"results": []})
        )
        await _search("exa", snippet_chars=0)
    assert json.loads(route.calls.last.request.content)["contents"] == {"text": True}


async def test_tavily_depth_from_env() -> None:
    with respx.mock:
        route = respx.post("https://api.tavily.com/search").mock(
            return_value=httpx.Response(200, json={"results": []})
        )
        await _search("tavily", env={"TAVILY_API_KEY": KEY, "TAVILY_DEPTH": "advanced"})
    assert json.loads(route.calls.last.request.content)["search_depth"] == "advanced"


async def test_brave_open_ended_after_runs_to_today() -> None:
    from datetime import UTC, datetime

    with respx.mock:
        route = respx.get("https://api.search.brave.com/res/v1/web/search").mock(
            return_value=httpx.Response(200, json={})
        )
        async with httpx.AsyncClient(verify=TLS) as http, make_engine(
            "brave", env=_env("brave"), client=http
        ) as client:
            await client.search("gpu prices after:2025-02-01", num_results=3)
    today = datetime.now(UTC).date().isoformat()
    assert route.calls.last.request.url.params["freshness"] == f"2025-02-01to{today}"


# --- errors as data -----------------------------------------------------------------------

ERROR_CASES = {
    "http 401": dict(return_value=httpx.Response(401, json={"message": "invalid api key"})),
    "bad json": dict(return_value=httpx.Response(200, text="<html>gateway</html>")),
    "timeout": dict(side_effect=httpx.ReadTimeout("read timed out")),
    "refused": dict(side_effect=httpx.ConnectError(f"refused for key={KEY}")),
    "wrong shape": dict(return_value=httpx.Response(200, json=["not", "an", "object"])),
}
ERROR_TEXT = {
    "http 401": "HTTP 401: invalid api key",
    "bad json": "not valid JSON",
    "timeout": "timed out after 5s",
    "refused": "connection error (ConnectError); gave up after 3 attempts",
    "wrong shape": "unexpected response shape",
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
@pytest.mark.parametrize("engine", sorted(CASES))
async def test_failures_are_data_naming_engine_never_key(engine: str, case: str) -> None:
    _, method, url, *_ = CASES[engine]
    with respx.mock:
        respx.request(method, url).mock(**ERROR_CASES[case])
        outcome = await _search(engine)
    assert outcome.results == ()
    assert outcome.error is not None
    assert outcome.error.startswith(f"{engine}: ")
    assert ERROR_TEXT[case] in outcome.error
    assert KEY not in outcome.error


API_ERROR_ENGINES = ["bing", "exa", "keenable", "parallel", "perplexity", "tavily", "ceramic",
                     "you"]


@pytest.mark.parametrize("engine", API_ERROR_ENGINES)
async def test_api_error_field_in_200_body(engine: str) -> None:
    _, method, url, *_ = CASES[engine]
    with respx.mock:
        respx.request(method, url).mock(
            return_value=httpx.Response(200, json={"error": "monthly quota exhausted"})
        )
        outcome = await _search(engine)
    assert outcome.error == f"{engine}: API error: monthly quota exhausted"


async def test_octen_envelope_code_is_an_api_error() -> None:
    with respx.mock:
        respx.post("https://api.octen.ai/search").mock(
            return_value=httpx.Response(200, json={"code": 401, "msg": "invalid key", "data": None})
        )
        outcome = await _search("octen")
    assert outcome.error == "octen: API error code 401: invalid key"
