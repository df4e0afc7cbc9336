"""Public-source etiquette: contact User-Agent, base-URL override, rate limit, Retry-After."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import httpx
import pytest
import respx
from fakeclock import FakeTime

from needle_lib.benches.rows import canonical_text, dedupe_rows, query_id
from needle_lib.net.retry import RetryPolicy
from needle_lib.net.sources import MissingContact, SourceClient, SourceError, SourceUnreachable
from needle_lib.progress import Progress
from needle_lib.testing.loopback import closed_port_url


class Registry(SourceClient):
    source = "registry"
    default_base_url = "https://registry.example"
    min_interval = 0.1
    contact_required = True


ENV = {"NEEDLE_CONTACT": "ops@example.org"}


def make(env=ENV, time: FakeTime | None = None) -> Registry:
    time = time or FakeTime()
    return Registry(env=env, sleep=time.sleep, clock=time.clock)


def test_missing_contact_is_an_error_before_any_request() -> None:
    with pytest.raises(MissingContact, match="set NEEDLE_CONTACT"):
        make(env={})


@respx.mock
async def test_user_agent_carries_the_contact_and_base_url_is_overridable() -> None:
    route = respx.get("http://127.0.0.1:9/v1/x").respond(json={"ok": True})
    client = make(env={**ENV, "NEEDLE_REGISTRY_BASE_URL": "http://127.0.0.1:9/"})
    assert await client.get_json("/v1/x") == {"ok": True}
    agent = route.calls[0].request.headers["User-Agent"]
    assert agent.startswith("needle-evals/") and agent.endswith("(ops@example.org)")
    await client.aclose()


@respx.mock
async def test_rate_limit_spaces_request_starts() -> None:
    respx.get("https://registry.example/a").respond(json=[])
    time = FakeTime()
    client = make(time=time)
    for _ in range(3):
        await client.get_json("/a")
    assert time.sleeps == [0.1, 0.1]
    await client.aclose()


@respx.mock
async def test_429_with_retry_after_is_retried_and_counted() -> None:
    respx.get("https://registry.example/a").mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "3"}), httpx.Response(200, json={"n": 1}),
    ])
    time = FakeTime()
    client = make(time=time)
    assert await client.get_json("/a") == {"n": 1}
    assert 3.0 in time.sleeps
    assert (client.stats.requests, client.stats.retries, client.stats.errors) == (1, 1, 0)
    await client.aclose()


@respx.mock
async def test_final_failures_name_source_url_and_reason() -> None:
    respx.get("https://registry.example/missing").respond(404, text="no such thing")
    respx.get("https://registry.example/html").respond(200, text="<html>hi</html>")
    client = make()
    with pytest.raises(SourceError, match=r"registry: https://registry.example/missing: HTTP 404"):
        await client.get_json("/missing")
    with pytest.raises(SourceError, match="not JSON"):
        await client.get_json("/html")
    await client.aclose()


async def test_a_refused_connection_fails_at_once_naming_host_and_override() -> None:
    url = closed_port_url()
    time = FakeTime()
    client = make(env={**ENV, "NEEDLE_REGISTRY_BASE_URL": url}, time=time)
    with pytest.raises(SourceUnreachable) as raised:
        await client.get_json("/a")
    message = str(raised.value)
    assert "\n" not in message
    assert f"registry: cannot reach {url.removeprefix('http://')} (connection refused)" in message
    assert "set NEEDLE_REGISTRY_BASE_URL" in message
    # one attempt, no backoff: offline does not heal in seconds
    assert (client.stats.requests, client.stats.retries) == (1, 0)
    assert time.sleeps == []
    # a later request fails without another connection attempt (or a rate-limit wait)
    with pytest.raises(SourceUnreachable):
        await client.get_json("/b")
    assert client.stats.requests == 1
    # and generators that drop a failed page (``except SourceError``) do not swallow it
    assert not isinstance(raised.value, SourceError)
    await client.aclose()


@respx.mock
async def test_an_html_error_page_is_quoted_by_its_title_not_inlined() -> None:
    page = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
            + "<p>upstream unavailable</p>" * 200 + "</body></html>")
    respx.get("https://registry.example/a").respond(404, html=page)
    client = make()
    with pytest.raises(SourceError) as raised:
        await client.get_json("/a")
    message = str(raised.value)
    assert message.endswith(f"HTTP 404: HTML page '502 Bad Gateway' ({len(page):,} chars)")
    assert "<p>" not in message and "\n" not in message
    await client.aclose()


def test_only_sources_give_up_on_a_refused_connection() -> None:
    refused = httpx.ConnectError("[Errno 111] Connection refused")
    # engines and model servers keep retrying: a local server restarting refuses for a moment
    assert RetryPolicy().retryable_exception(refused)
    assert not make().retry.retryable_exception(refused)
    assert make().retry.retryable_exception(httpx.ReadError("reset"))  # still transient


async def test_an_unresolvable_name_is_unreachable_too() -> None:
    # ".invalid" never resolves (RFC 2606); the mocked transport raises what httpx raises
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    client = Registry(env={**ENV, "NEEDLE_REGISTRY_BASE_URL": "http://registry.invalid"},
                      client=http, sleep=FakeTime().sleep)
    with pytest.raises(SourceUnreachable, match=r"cannot reach registry\.invalid \("):
        await client.get("/a")
    assert (client.stats.requests, client.stats.retries) == (1, 0)
    await http.aclose()


def test_query_id_is_canonical_hash_plus_utc_hour() -> None:
    hour = datetime(2026, 7, 2, 14, 37, tzinfo=UTC)
    qid = query_id("  Apple  CEO ", hour)
    assert qid == query_id("apple ceo", hour.replace(minute=1))
    assert qid.endswith("_2026-07-02T14") and len(qid.split("_")[0]) == 16
    assert canonical_text("Ｅ\u0301 X") == canonical_text("ｅ\u0301   x")
    rows = [{"query_id": "a", "n": 1}, {"query_id": "a", "n": 2}, {"query_id": "b", "n": 3}]
    assert [r["n"] for r in dedupe_rows(rows)] == [1, 3]


def test_progress_in_a_log_writes_a_line_per_decile() -> None:
    out = io.StringIO()
    progress = Progress("companies", 20, stream=out)
    for _ in range(20):
        progress.advance()
    progress.count("dropped", 2)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 12  # deciles 0..10, then the final state with its counters
    assert lines[-2].startswith("companies [") and lines[-2].endswith("20/20")
    assert lines[-1].endswith("20/20  dropped 2")
