"""Engines from ``configs/engines/<name>.toml``: strict validation, the request a definition
builds, response mapping, keys and base URLs, and the shipped SearXNG file against a loopback
SearXNG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from needle_lib.commands.engines import engine_rows
from needle_lib.search import MissingAPIKey, SearchResult, known_engines, make_engine
from needle_lib.search.engine_config import load_engine_definition
from needle_lib.testing.search_server import FakeSearchServer
from needle_lib.tomlconf import ConfigError

KEY = "vespa-SECRET-key"

# A POST engine that uses every option: a RAG retriever or an OpenSearch proxy.
RETRIEVER = """
description = "in-house retriever"
method = "POST"
base_url = "https://search.internal.example/"
path = "/v2/query"
timeout = 12

[auth]
header = "Authorization"
prefix = "Bearer "
key_env = "RETRIEVER_KEY"

[request]
query = "query.text"
count = "page.size"
max_count = 10
max_query_words = 6
snippet_chars = "highlight.max_chars"
snippet_chars_range = [100, 1000]
site = "field"
site_field = "filters.domains"
after = "field"
after_field = "filters.published.gte"
before = "query"
date_format = "%Y%m%d"

[request.fixed]
index = "web"
filters = { lang = "en" }

[request.headers]
X-Client = "needle"

[response]
results = "data.hits"
url = "doc.url"
title = "doc.title"
snippet = "highlights"
date = "doc.published"
error = "error.message"
"""

PAYLOAD = {"data": {"hits": [
    {"doc": {"url": "https://a.example/1", "title": "First", "published": "2025-02-01"},
     "highlights": ["one passage", "two passage"]},
    {"doc": {"url": "https://b.example/2", "title": "Second"}, "highlights": "single"},
    {"doc": {"title": "no url: dropped"}},
]}}


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def search(engines: dict, name: str, query: str, *, env: dict[str, str],
                 reply: httpx.Response | None = None, num_results: int = 5,
                 snippet_chars: int = 300) -> tuple[httpx.Request | None, Any]:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return reply or httpx.Response(200, json={"data": {"hits": []}, "results": []})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http, make_engine(
        name, env=env, engines=engines, client=http, snippet_chars=snippet_chars
    ) as client:
        outcome = await client.search(query, num_results=num_results)
    return (sent[0] if sent else None), outcome


@pytest.fixture
def retriever(tmp_path: Path) -> dict:
    write(tmp_path, "retriever", RETRIEVER)
    return known_engines(tmp_path)


# --- the request a definition builds ----------------------------------------------------------

async def test_post_definition_builds_nested_body_auth_and_operators(retriever: dict) -> None:
    query = ("how does the fed set interest rates each year now site:federalreserve.gov "
             "site:https://www.bis.org/x after:2025-01-01 before:2025-03-31")
    request, outcome = await search(retriever, "retriever", query, env={"RETRIEVER_KEY": KEY},
                                    num_results=50, snippet_chars=50)
    assert outcome.ok, outcome.error
    assert str(request.url) == "https://search.internal.example/v2/query"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["X-Client"] == "needle"
    assert json.loads(request.content) == {
        "index": "web",
        # 6 words in all: the before: token stays whole, the text gives way
        "query": {"text": "how does the fed set before:2025-03-31"},
        "page": {"size": 10},
        "highlight": {"max_chars": 100},
        "filters": {"lang": "en", "domains": ["federalreserve.gov", "www.bis.org"],
                    "published": {"gte": "20250101"}},
    }


async def test_get_definition_sends_literal_params(tmp_path: Path) -> None:
    write(tmp_path, "mini", """
method = "GET"
base_url = "http://127.0.0.1:9"
path = "/api/search"
[request]
query = "q"
count = "limit"
site = "query"
[request.fixed]
format = "json"
[response]
results = "results"
url = "link"
""")
    request, _ = await search(known_engines(tmp_path), "mini", "gpu site:a.com site:b.org",
                              env={})
    assert request.method == "GET"
    assert dict(request.url.params) == {"format": "json", "q": "gpu (site:a.com OR site:b.org)",
                                        "limit": "5"}
    assert "Authorization" not in request.headers


GET_FIXED = """
method = "GET"
base_url = "http://127.0.0.1:9"
path = "/api/search"
[request]
query = "q"
site = "field"
site_field = "domain"
[request.fixed]
safe = true
weights = [1, 2.5]
[response]
results = "results"
url = "link"
"""


async def test_get_definition_repeats_a_list_and_sends_scalars_as_httpx_writes_them(
    tmp_path: Path,
) -> None:
    write(tmp_path, "mini", GET_FIXED)
    request, outcome = await search(known_engines(tmp_path), "mini", "gpu site:a.com site:b.org",
                                    env={})
    assert outcome.ok
    assert request.url.params.multi_items() == [
        ("safe", "true"), ("weights", "1"), ("weights", "2.5"), ("domain", "a.com"),
        ("domain", "b.org"), ("q", "gpu")]


async def test_get_definition_refuses_a_table_in_the_query_string(tmp_path: Path) -> None:
    path = write(tmp_path, "mini", GET_FIXED.replace("safe = true", "opts = { a = 1 }"))
    request, outcome = await search(known_engines(tmp_path), "mini", "gpu", env={})
    assert request is None
    assert f"{path}: field 'opts' is a table or a nested list" in outcome.error


# --- the response ---------------------------------------------------------------------------

async def test_response_fields_by_dotted_path(retriever: dict) -> None:
    _, outcome = await search(retriever, "retriever", "rates", env={"RETRIEVER_KEY": KEY},
                              reply=httpx.Response(200, json=PAYLOAD), snippet_chars=0)
    assert outcome.results == (
        SearchResult("https://a.example/1", "First", "one passage\ntwo passage", "2025-02-01"),
        SearchResult("https://b.example/2", "Second", "single", None),
    )


async def test_error_field_and_missing_results_list_are_errors_naming_the_path(
    retriever: dict,
) -> None:
    _, failed = await search(retriever, "retriever", "rates", env={"RETRIEVER_KEY": KEY},
                             reply=httpx.Response(200, json={"error": {"message": "bad index"}}))
    assert failed.error == "retriever: API error: bad index"
    _, shapeless = await search(retriever, "retriever", "rates", env={"RETRIEVER_KEY": KEY},
                                reply=httpx.Response(200, json={"hits": []}))
    assert shapeless.error.startswith("retriever: response has no results list at 'data.hits'")
    assert "retriever.toml" in shapeless.error


# --- keys, base URLs, names ------------------------------------------------------------------

def test_required_key_unset_names_the_variable(retriever: dict) -> None:
    with pytest.raises(MissingAPIKey) as info:
        make_engine("retriever", env={}, engines=retriever)
    assert info.value.env_var == "RETRIEVER_KEY"


async def test_optional_key_unset_sends_no_auth_header(tmp_path: Path) -> None:
    write(tmp_path, "retriever", RETRIEVER.replace('key_env = "RETRIEVER_KEY"',
                                                   'key_env = "RETRIEVER_KEY"\noptional = true'))
    request, outcome = await search(known_engines(tmp_path), "retriever", "x", env={})
    assert outcome.ok and "Authorization" not in request.headers


def test_engine_without_base_url_needs_the_env_var() -> None:
    engines = known_engines()
    with pytest.raises(MissingAPIKey) as info:
        make_engine("searxng", env={}, engines=engines)
    assert info.value.env_var == "NEEDLE_SEARXNG_BASE_URL"
    env = {"NEEDLE_SEARXNG_BASE_URL": "http://127.0.0.1:8888/"}
    assert make_engine("searxng", env=env, engines=engines).base_url == "http://127.0.0.1:8888"


def test_config_engines_are_listed_after_builtins(retriever: dict) -> None:
    rows = engine_rows({}, retriever)
    assert rows[-1][0] == "retriever" and rows[0][0] == "keenable"
    assert rows[-1][3:] == ("RETRIEVER_KEY", "unset")
    assert retriever["retriever"].timeout == 12.0


def test_a_builtin_name_clash_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "exa", RETRIEVER)
    with pytest.raises(ConfigError, match=f"{path}: engine 'exa' is a built-in engine"):
        known_engines(tmp_path)


def test_no_directory_means_builtins_only(tmp_path: Path) -> None:
    assert "searxng" not in known_engines(tmp_path / "missing")


# --- strict validation --------------------------------------------------------------------

INVALID = {
    "unknown top key": (RETRIEVER.replace("timeout = 12", "timout = 12"), "unknown key 'timout'"),
    "unknown request key": (RETRIEVER.replace("max_count", "max_cnt"),
                            "[request] unknown key 'max_cnt'"),
    "missing method": (RETRIEVER.replace('method = "POST"', ""),
                       "missing required key 'method'"),
    "missing results": (RETRIEVER.replace('results = "data.hits"', ""),
                        "[response] missing required key 'results'"),
    "wrong type": (RETRIEVER.replace("timeout = 12", 'timeout = "12"'),
                   "key 'timeout' must be float"),
    "method": (RETRIEVER.replace('"POST"', '"PUT"'), "key 'method' must be GET or POST"),
    "path": (RETRIEVER.replace('"/v2/query"', '"v2/query"'), "key 'path' must start with '/'"),
    "placement": (RETRIEVER.replace('before = "query"', 'before = "body"'),
                  "[request] key 'before' must be one of query, drop, field"),
    "field without name": (RETRIEVER.replace('site_field = "filters.domains"', ""),
                           "key 'site_field' is required when site = \"field\""),
    "range": (RETRIEVER.replace("[100, 1000]", "[1000, 100]"),
              "key 'snippet_chars_range' must be [min, max]"),
    "fixed date": (RETRIEVER.replace('index = "web"', "since = 2025-01-01"),
                   "[request.fixed] key 'since': write the date as a string"),
    "fixed date in a list": (RETRIEVER.replace('index = "web"', "days = [2025-01-01]"),
                             "[request.fixed] key 'days': write the date as a string"),
    "header type": (RETRIEVER.replace('X-Client = "needle"', "X-Client = 1"),
                    "[request.headers] key 'X-Client' must be str"),
    "auth key": (RETRIEVER.replace('key_env = "RETRIEVER_KEY"', ""),
                 "[auth] missing required key 'key_env'"),
    "syntax": (RETRIEVER.replace("[request]", "[request"), "invalid TOML"),
    "timeout beyond a day": (RETRIEVER.replace("timeout = 12", "timeout = 1e10"),
                             "key 'timeout' must be > 0 and at most 86400 seconds, got 1e+10"),
    "max count": (RETRIEVER.replace("max_count = 10", "max_count = 0"),
                  "[request] key 'max_count' must be at least 1"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_definition_names_file_and_key(tmp_path: Path, case: str) -> None:
    text, message = INVALID[case]
    path = write(tmp_path, "retriever", text)
    with pytest.raises(ConfigError) as info:
        load_engine_definition(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_file_name_must_be_an_engine_name(tmp_path: Path) -> None:
    path = write(tmp_path, "My Engine", RETRIEVER)
    with pytest.raises(ConfigError, match="must be lowercase letters, digits and dashes"):
        load_engine_definition(path)


# --- the shipped SearXNG definition against a loopback SearXNG ------------------------------

async def test_searxng_against_loopback_server() -> None:
    with FakeSearchServer() as server:
        async with make_engine("searxng", env=server.env(), snippet_chars=0) as client:
            outcome = await client.search("fed minutes site:federalreserve.gov after:2025-01-01",
                                          num_results=5)
    assert outcome.ok, outcome.error
    assert len(outcome.results) == 5  # a page of 8, cut to the top 5
    first = outcome.results[0]
    assert first.title == f"SearXNG: {first.url}" and first.snippet == f"snippet about {first.url}"
    assert first.published_date is None
    assert server.requests["searxng"] == 1


async def test_searxng_request_shape() -> None:
    env = {"NEEDLE_SEARXNG_BASE_URL": "http://127.0.0.1:8080"}
    request, _ = await search(known_engines(), "searxng",
                              "fed minutes site:federalreserve.gov after:2025-01-01", env=env)
    assert str(request.url.copy_with(query=None)) == "http://127.0.0.1:8080/search"
    assert dict(request.url.params) == {"format": "json", "categories": "general",
                                        "q": "fed minutes site:federalreserve.gov"}


async def test_results_path_empty_means_the_body_is_the_list(tmp_path: Path) -> None:
    write(tmp_path, "flat", """
method = "GET"
base_url = "http://127.0.0.1:9"
path = "/s"
[request]
query = "q"
[response]
results = ""
url = "u"
snippet = "s"
""")
    reply = httpx.Response(200, json=[{"u": "https://a.example/", "s": "text"}])
    _, outcome = await search(known_engines(tmp_path), "flat", "x", env={}, reply=reply)
    assert outcome.results == (SearchResult("https://a.example/", "", "text", None),)


def test_the_documented_example_is_a_valid_definition(tmp_path: Path) -> None:
    page = (Path(__file__).parent.parent / "docs" / "engines.md").read_text(encoding="utf-8")
    section = page.split("## Engines from config files", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    definition = load_engine_definition(write(tmp_path, "retriever", example))
    assert definition.auth is not None and definition.site.name == "filters.domains"
