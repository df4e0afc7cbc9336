"""Every engine client against respx: snippet budget, response mapping from the documented
sample payloads, and errors returned as data (request shapes: test_search_request_shapes)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from needle_lib.search import ENGINES, SearchResult, make_engine
from needle_lib.search.bounds import cap_snippet

PAYLOADS = Path(__file__).parent / "payloads" / "search"
KEY = "sk-test-SECRET-4242"
QUERY = '"net income" nvidia site:sec.gov after:2025-01-01 before:2025-03-31'
# One TLS context for every test client: building one per client costs ~40 ms (respx intercepts
# all requests, so nothing ever handshakes).
TLS = ssl.create_default_context()

# engine -> (payload file, method, url); what each sends is in test_search_request_shapes.py
CASES: dict[str, tuple[str, str, str]] = {
    "keenable": ("keenable", "POST", "https://api.keenable.ai/v1/search"),
    "keenable-realtime": ("keenable", "POST", "https://api.keenable.ai/v1/search"),
    "exa": ("exa", "POST", "https://api.exa.ai/search"),
    "exa-instant": ("exa", "POST", "https://api.exa.ai/search"),
    "google": ("google", "POST", "https://google.serper.dev/search"),
    "bing": ("bing", "GET", "https://www.searchapi.io/api/v1/search"),
    "brave": ("brave", "GET", "https://api.search.brave.com/res/v1/web/search"),
    "parallel": ("parallel", "POST", "https://api.parallel.ai/v1/search"),
    "parallel-turbo": ("parallel", "POST", "https://api.parallel.ai/v1/search"),
    "tavily": ("tavily", "POST", "https://api.tavily.com/search"),
    "perplexity": ("perplexity", "POST", "https://api.perplexity.ai/search"),
    "octen": ("octen", "POST", "https://api.octen.ai/search"),
    "ceramic": ("ceramic", "POST", "https://api.ceramic.ai/search"),
    "you": ("you", "POST", "https://ydc-index.io/v1/search"),
}


def _payload(name: str) -> dict[str, Any]:
    return json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))


def _env(engine: str) -> dict[str, str]:
    return {ENGINES[engine].key_env: KEY}


async def _no_sleep(_: float) -> None:
    return None


async def _search(engine: str, *, snippet_chars: int = 300, env: dict[str, str] | None = None,
                  num_results: int = 5, query: str = QUERY):
    async with httpx.AsyncClient(verify=TLS) as http, make_engine(
        engine, snippet_chars=snippet_chars, env=_env(engine) if env is None else env,
        sleep=_no_sleep, timeout=5.0, client=http,
    ) as client:
        return await client.search(query, num_results=num_results)


def test_every_registered_engine_has_a_case() -> None:
    assert set(CASES) == set(ENGINES)


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_response_mapping(engine: str) -> None:
    payload_name, method, url, *_ = CASES[engine]
    payload = _payload(payload_name)
    with respx.mock:
        respx.request(method, url).mock(return_value=httpx.Response(200, json=payload["response"]))
        outcome = await _search(engine, snippet_chars=0)
    assert outcome.results == tuple(SearchResult(**row) for row in payload["expected"])
    assert outcome.latency_s >= 0


def _result_lists(node: Any) -> list[list[Any]]:
    """Every list of result objects (entries with a URL) inside a payload."""
    if isinstance(node, dict):
        return [found for value in node.values() for found in _result_lists(value)]
    if isinstance(node, list):
        here = [node] if any(isinstance(e, dict) and ("url" in e or "link" in e)
                             for e in node) else []
        return here + [found for value in node for found in _result_lists(value)]
    return []


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_malformed_entries_are_skipped_and_counted_not_a_void_answer(engine: str) -> None:
    """A ``null``, a string and a URL-less object among real results: the page still counts."""
    payload_name, method, url, *_ = CASES[engine]
    payload = _payload(payload_name)
    lists = _result_lists(payload["response"])
    assert lists, f"{payload_name}.json has no result list"
    url_less = sum(not (e.get("url") or e.get("link")) for entries in lists for e in entries)
    for entries in lists:
        entries[1:1] = [None, "not a result", {"title": "no url here"}]
    with respx.mock:
        respx.request(method, url).mock(return_value=httpx.Response(200, json=payload["response"]))
        outcome = await _search(engine, snippet_chars=0)
    assert outcome.error is None
    assert outcome.results == tuple(SearchResult(**row) for row in payload["expected"])
    assert outcome.malformed == 3 * len(lists) + url_less


async def test_a_results_field_that_is_not_a_list_is_a_shape_error() -> None:
    with respx.mock:
        respx.post(CASES["exa"][2]).mock(return_value=httpx.Response(200, json={"results": "x"}))
        outcome = await _search("exa")
    assert outcome.error is not None and "unexpected response shape" in outcome.error


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_top_k_kept_with_whole_snippets_and_capped_by_the_consumer(engine: str) -> None:
    payload_name, method, url, *_ = CASES[engine]
    payload = _payload(payload_name)
    with respx.mock:
        respx.request(method, url).mock(return_value=httpx.Response(200, json=payload["response"]))
        outcome = await _search(engine, snippet_chars=12, num_results=2)
    expected = [row["snippet"] for row in payload["expected"][:2]]
    assert [r.snippet for r in outcome.results] == expected
    assert [cap_snippet(r, 12).snippet for r in outcome.results] == [e[:12] for e in expected]
    assert [cap_snippet(r, 0).snippet for r in outcome.results] == expected


@pytest.mark.parametrize("engine", sorted(CASES))
async def test_no_snippet_budget_sent_when_uncapped(engine: str) -> None:
    _, method, url, *_ = CASES[engine]
    with respx.mock:
        route = respx.request(method, url).mock(return_value=httpx.Response(200, json={}))
        await _search(engine, snippet_chars=0)
    sent = route.calls.last.request
    text = sent.url.query.decode() + sent.content.decode()
    for field in ("snippet_max_length", "maxCharacters", "maxDescriptionLength", "max_tokens"):
        assert field not in text


async def test_tavily_depth_from_env() -> None:
    with respx.mock:
        route = respx.post("https://api.tavily.com/search").mock(
            return_value=httpx.Response(200, json={"results": []})
        )
        await _search("tavily", env={"TAVILY_API_KEY": KEY, "TAVILY_DEPTH": "advanced"})
    assert json.loads(route.calls.last.request.content)["search_depth"] == "advanced"


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


def _bing_says(message: str) -> None:
    respx.get("https://www.searchapi.io/api/v1/search").mock(
        return_value=httpx.Response(200, json={"error": message}))


NO_RESULTS = "Bing didn't return any results for this query."


@pytest.mark.parametrize("query", [
    QUERY, "acme site:sec.gov", 'acme "annual report"', "acme “annual report” filing",
    "site:sec.gov after:2025-01-01",
])
@pytest.mark.parametrize("message", [NO_RESULTS, "Bing did not return any results"])
async def test_bing_no_results_is_an_empty_answer_to_a_narrow_query(message: str,
                                                                     query: str) -> None:
    with respx.mock:
        _bing_says(message)
        outcome = await _search("bing", query=query)
    assert outcome.ok
    assert outcome.results == ()


@pytest.mark.parametrize("query", ["acme annual report", "ecb rate decision after:2025-01-01"])
async def test_bing_no_results_to_a_plain_query_is_an_error(query: str) -> None:
    """Bing is asked the plain text (dates are dropped): "no results" there is SearchApi's
    failed scrape, not a page-less web."""
    with respx.mock:
        _bing_says(NO_RESULTS)
        outcome = await _search("bing", query=query)
    assert outcome.error == f"bing: API error: {NO_RESULTS}"


async def test_bing_other_errors_stay_errors_for_narrow_queries() -> None:
    with respx.mock:
        _bing_says("Invalid API key.")
        outcome = await _search("bing", query="acme site:sec.gov")
    assert outcome.error == "bing: API error: Invalid API key."
