"""The shared HTTP base: bounded exponential backoff on 429/5xx/connection errors, none on
other 4xx or timeouts, latency recorded per successful search, and a key-free repr."""

from __future__ import annotations

import ssl

import httpx
import pytest
import respx

from needle_lib.search import RetryPolicy, SearchClient, make_engine

URL = "https://api.exa.ai/search"
KEY = "exa-SECRET-key"
TLS = ssl.create_default_context()
OK = httpx.Response(200, json={"results": [{"url": "https://a.example/", "title": "A"}]})


class Sleeps:
    """Records backoff delays instead of sleeping, so retry tests run instantly."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def _run(responses: list, retry: RetryPolicy | None = None):
    sleeps = Sleeps()
    with respx.mock:
        route = respx.post(URL).mock(side_effect=responses)
        async with httpx.AsyncClient(verify=TLS) as http, make_engine(
            "exa", env={"EXA_API_KEY": KEY}, sleep=sleeps, retry=retry, client=http
        ) as client:
            outcome = await client.search("gpu", num_results=3)
            samples = list(client.latency_samples)
    return outcome, route.call_count, sleeps.delays, samples


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_transient_status_is_retried_then_succeeds(status: int) -> None:
    outcome, calls, delays, samples = await _run([httpx.Response(status), OK])
    assert outcome.ok
    assert [r.url for r in outcome.results] == ["https://a.example/"]
    assert calls == 2
    assert delays == [0.5]
    assert samples == [outcome.latency_s]


async def test_connection_error_is_retried() -> None:
    outcome, calls, delays, _ = await _run([httpx.ConnectError("refused"), OK])
    assert outcome.ok and calls == 2 and delays == [0.5]


async def test_backoff_is_exponential_and_bounded() -> None:
    policy = RetryPolicy(max_attempts=5, base_delay_s=1.0, max_delay_s=3.0)
    outcome, calls, delays, samples = await _run([httpx.Response(503)] * 5, policy)
    assert calls == 5
    assert delays == [1.0, 2.0, 3.0, 3.0]
    assert outcome.error == "exa: HTTP 503; gave up after 5 attempts"
    assert samples == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_4xx_is_not_retried(status: int) -> None:
    outcome, calls, delays, _ = await _run([httpx.Response(status, json={"error": "nope"})])
    assert calls == 1 and delays == []
    assert outcome.error == f"exa: HTTP {status}: nope"


async def test_timeout_is_not_retried() -> None:
    outcome, calls, delays, _ = await _run([httpx.ConnectTimeout("slow")])
    assert calls == 1 and delays == []
    assert outcome.error == "exa: timed out after 30s"


def test_retry_policy_rejects_zero_attempts() -> None:
    with pytest.raises(ValueError, match="max_attempts must be >= 1"):
        RetryPolicy(max_attempts=0)


async def test_outcome_unpacks_like_a_tuple() -> None:
    outcome, *_ = await _run([OK])
    results, error, latency = outcome
    assert (results, error, latency) == (outcome.results, None, outcome.latency_s)


def test_repr_never_shows_the_key() -> None:
    client = make_engine("exa", env={"EXA_API_KEY": KEY})
    assert isinstance(client, SearchClient)
    assert KEY not in repr(client)
    assert "key=set" in repr(client)


def test_negative_snippet_chars_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="snippet_chars must be >= 0"):
        make_engine("exa", env={"EXA_API_KEY": KEY}, snippet_chars=-1)
