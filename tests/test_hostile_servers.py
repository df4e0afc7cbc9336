"""Servers Needle does not control, on loopback: endless streams, drips, huge answers, gzip
bombs, deep JSON, malformed result items, keys echoed across a cut (issue 20, items 4–10).

Every misbehaving stream stops on the server side after ``max_seconds``, so a regression
fails here rather than hanging the suite; the bounds asserted are generous (the point is
"bounded", not "fast").
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx
import pytest

from needle_lib.judge.base import judge_reply
from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.verdict import JudgeError
from needle_lib.llm.client import AsyncChatClient, ChatClient
from needle_lib.llm.config import ModelConfig
from needle_lib.llm.errors import LLMBadResponseError, LLMConnectionError, LLMHTTPError
from needle_lib.net.retry import RetryPolicy
from needle_lib.net.sources import SourceClient, SourceError
from needle_lib.redact import redact_then_cut, redact_url, register_secret
from needle_lib.search.exa import ExaClient
from needle_lib.search.registry import known_engines, make_engine
from needle_lib.testing.hostile_server import GOOD_URLS, MALFORMED_ITEMS, HostileServer

ONCE = RetryPolicy(attempts=1)
KEY = "sk-LEAKCANARY-0123456789abcdef"
MiB = 1024 * 1024
#: The server gives up on its own after this; every bound below is well under it.
SERVER_SECONDS = 60.0


async def _no_sleep(_: float) -> None:
    return None


@pytest.fixture(scope="module")
def hostile():
    with HostileServer(max_seconds=SERVER_SECONDS, huge_bytes=4 * MiB,
                       bomb_bytes=64 * MiB, deep=200_000) as server:
        yield server


def _model(base_url: str, **fields) -> ModelConfig:
    return ModelConfig(name="m", label="m", key="m", source="test", base_url=base_url,
                       **fields)


# --- item 8: the timeout is a total deadline per attempt

def test_a_dripping_server_is_cut_at_the_deadline_sync(hostile):
    start = time.monotonic()
    with ChatClient(_model(f"{hostile.url}/drip", timeout=0.5), retry=ONCE) as client, \
            pytest.raises(LLMConnectionError, match="timeout"):
        client.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < SERVER_SECONDS / 2


async def test_an_endless_stream_is_cut_at_the_deadline_async(hostile):
    start = time.monotonic()
    async with AsyncChatClient(_model(f"{hostile.url}/endless", timeout=0.5,
                                      max_answer_bytes=1 << 40), retry=ONCE) as client:
        with pytest.raises(LLMConnectionError, match="timeout"):
            await client.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < SERVER_SECONDS / 2


async def test_a_search_engine_on_a_drip_is_an_error_naming_the_timeout(hostile):
    async with ExaClient(name="exa", api_key="k", base_url=f"{hostile.url}/drip", timeout=0.5,
                         retry=ONCE) as engine:
        outcome = await engine.search("anything", num_results=5)
    assert outcome.error == "exa: timed out after 0.5s"


# --- item 9: size caps, decoded size included

async def test_a_huge_answer_keeps_its_head_and_is_flagged(hostile):
    async with AsyncChatClient(_model(f"{hostile.url}/huge", max_answer_bytes=MiB)) as client:
        result = await client.complete([{"role": "user", "content": "hi"}])
    assert result.truncated_by_needle
    assert 0.9 * MiB < len(result.content) <= MiB and set(result.content) == {"b"}


def test_a_gzip_bomb_inflates_only_to_the_cap(hostile):
    with ChatClient(_model(f"{hostile.url}/bomb", max_answer_bytes=MiB)) as client:
        result = client.complete([{"role": "user", "content": "hi"}])
    assert result.truncated_by_needle
    assert len(result.content) <= MiB and set(result.content) == {"0"}


async def test_a_search_response_over_the_cap_is_an_error_naming_it(hostile):
    async with ExaClient(name="exa", api_key="k", base_url=f"{hostile.url}/bomb",
                         max_response_bytes=MiB, retry=ONCE) as engine:
        outcome = await engine.search("anything", num_results=5)
    assert outcome.error == f"exa: response larger than the {MiB}-byte cap " \
                            "(max_response_bytes); not parsed"


async def test_the_judge_refuses_a_reply_cut_by_the_cap(hostile):
    async with AsyncChatClient(_model(f"{hostile.url}/huge", max_answer_bytes=MiB)) as client:
        with pytest.raises(JudgeError, match="max_answer_bytes"):
            await judge_reply(client, [{"role": "user", "content": "rate"}], query="q",
                              url="https://r.example")


# --- item 10: deep JSON, malformed items

def test_deeply_nested_json_is_a_bad_response_not_a_recursion_error(hostile):
    with ChatClient(_model(f"{hostile.url}/deep"), retry=ONCE) as client, \
            pytest.raises(LLMBadResponseError, match="not valid JSON"):
        client.complete([{"role": "user", "content": "hi"}])


async def test_deeply_nested_json_from_an_engine_or_a_source_is_an_error(hostile):
    async with ExaClient(name="exa", api_key="k", base_url=f"{hostile.url}/deep") as engine:
        outcome = await engine.search("anything", num_results=5)
    assert outcome.error is not None and "nested too deeply" in outcome.error

    class Deep(SourceClient):
        source = "deep"
        default_base_url = hostile.url

    source = Deep(env={}, retry=ONCE)
    with pytest.raises(SourceError, match="nested too deeply"):
        await source.get_json("/deep")
    await source.aclose()


def test_a_judge_answer_nesting_json_deeply_is_a_judge_error():
    with pytest.raises(JudgeError, match="too deeply"):
        parse_verdict('{"rating": ' * 100_000)


async def test_malformed_result_items_are_skipped_and_counted(hostile):
    async with ExaClient(name="exa", api_key="k", base_url=f"{hostile.url}/items") as engine:
        outcome = await engine.search("anything", num_results=10)
    assert outcome.ok, outcome.error
    assert [r.url for r in outcome.results] == list(GOOD_URLS)
    assert outcome.malformed == len(MALFORMED_ITEMS)


def _get_engine(directory: Path, name: str, url: str, auth: str = "") -> None:
    """A GET config engine reading the hostile server's ``items`` page."""
    (directory / f"{name}.toml").write_text(
        f'method = "GET"\nbase_url = "{url}/items"\npath = "/search"\n{auth}'
        '[request]\nquery = "q"\n[response]\nresults = "results"\nurl = "url"\n',
        encoding="utf-8")


# --- items 4–5: secrets ---------------------------------------------------------------------------

def test_redaction_happens_before_the_cut():
    text = "x" * 180 + f" bad key {KEY} and more"
    cut = redact_then_cut(text, 200, (KEY,))
    assert "LEAK" not in cut and cut.endswith("…")
    naive = " ".join(text[:200].replace(KEY, "***").split())  # the old order
    assert "sk-LEAK" in naive


async def test_an_engine_echoing_its_key_across_the_cut_keeps_none_of_it(hostile):
    async with ExaClient(name="exa", api_key=KEY, base_url=f"{hostile.url}/echo",
                         retry=ONCE) as engine:
        outcome = await engine.search("anything", num_results=5)
    assert outcome.error is not None and "HTTP 401" in outcome.error
    assert "LEAK" not in outcome.error and "sk-" not in outcome.error


def test_a_model_server_echoing_the_key_keeps_none_of_it(hostile):
    with ChatClient(_model(f"{hostile.url}/echo", api_key=KEY), retry=ONCE) as client, \
            pytest.raises(LLMHTTPError) as raised:
        client.complete([{"role": "user", "content": "hi"}])
    assert "LEAK" not in str(raised.value) and "401" in str(raised.value)


def test_secret_query_parameters_are_masked_in_urls():
    url = f"https://api.example/search?q=boots&api_key={KEY}&limit=5"
    assert redact_url(url) == "https://api.example/search?q=boots&api_key=***&limit=5"
    assert KEY not in redact_then_cut(f"GET {url} failed", 500)


async def test_a_config_engine_sends_its_key_as_a_secret_query_parameter(
        hostile, tmp_path: Path, caplog):
    _get_engine(tmp_path, "paramkey", hostile.url,
                '[auth]\nparam = "api_key"\nkey_env = "PARAMKEY_SECRET"\n')
    secret = "pk-QUERYSTRING-KEY-42"
    caplog.set_level(logging.DEBUG)
    engine = make_engine("paramkey", env={"PARAMKEY_SECRET": secret},
                         engines=known_engines(tmp_path))
    async with engine:
        outcome = await engine.search("boots", num_results=5)
    assert outcome.ok, outcome.error
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "api_key=***" in logged  # httpx logged the request line, masked
    assert secret not in logged


def test_registered_secrets_are_masked_in_any_text():
    register_secret("tok-REGISTERED-777")
    assert redact_then_cut("token tok-REGISTERED-777 rejected", 100) == "token *** rejected"


# --- item 7: a query too long for a URL

async def test_a_100_kb_query_on_a_get_engine_is_a_clear_case_error(hostile, tmp_path: Path):
    _get_engine(tmp_path, "getter", hostile.url)
    engine = make_engine("getter", env={}, engines=known_engines(tmp_path))
    async with engine:
        outcome = await engine.search("boots " * 20_000, num_results=5)
    assert outcome.error is not None
    assert outcome.error.startswith("getter: request URL refused before sending")


async def test_an_unsupported_content_encoding_is_named():
    def brotli(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Encoding": "br"},
                              stream=httpx.ByteStream(b"\x00\x01"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(brotli)) as http, \
            ExaClient(name="exa", api_key="k", base_url="https://api.exa.ai", client=http,
                      retry=ONCE, sleep=_no_sleep) as engine:
        outcome = await engine.search("q", num_results=3)
    assert outcome.error is not None
    assert "unsupported Content-Encoding 'br'" in outcome.error
