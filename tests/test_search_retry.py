"""The shared HTTP base under the one retry policy: 429/500/502/503/504, connection errors and
timeouts retried with exponential backoff (1 s base, 30 s cap) or the server's Retry-After
(seconds or HTTP date, capped); other 4xx never; retries counted per outcome."""

from __future__ import annotations

import ssl
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
import respx

from needle_lib.net.retry import parse_retry_after
from needle_lib.search import ENGINES, RetryPolicy, make_engine

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
    return outcome, route.call_count, sleeps.delays


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_transient_status_is_retried_then_succeeds(status: int) -> None:
    outcome, calls, delays = await _run([httpx.Response(status), OK])
    assert outcome.ok
    assert [r.url for r in outcome.results] == ["https://a.example/"]
    assert calls == 2
    assert delays == [1.0]
    assert outcome.retries == 1


async def test_connection_error_is_retried() -> None:
    outcome, calls, delays = await _run([httpx.ConnectError("refused"), OK])
    assert outcome.ok and calls == 2 and delays == [1.0]


async def test_backoff_is_exponential_and_bounded() -> None:
    policy = RetryPolicy(attempts=7)
    outcome, calls, delays = await _run([httpx.Response(503)] * 7, policy)
    assert calls == 7
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    assert outcome.error == "exa: HTTP 503; gave up after 7 attempts"
    assert outcome.retries == 6


async def test_retry_after_seconds_wins_over_backoff_and_is_capped() -> None:
    outcome, calls, delays = await _run([
        httpx.Response(429, headers={"Retry-After": "7"}),
        httpx.Response(429, headers={"Retry-After": "86400"}),
        OK,
    ])
    assert outcome.ok and calls == 3
    assert delays == [7.0, 30.0]


async def test_retry_after_http_date_is_honoured() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    outcome, _, delays = await _run([httpx.Response(503, headers={"Retry-After": when}), OK])
    assert outcome.ok
    assert len(delays) == 1 and 15.0 <= delays[0] <= 20.0


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("12", now=now) == 12.0
    assert parse_retry_after("Sun, 29 Nov 2026 12:00:45 GMT", now=now) == 45.0
    assert parse_retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_4xx_is_not_retried(status: int) -> None:
    outcome, calls, delays = await _run([httpx.Response(status, json={"error": "nope"})])
    assert calls == 1 and delays == []
    assert outcome.error == f"exa: HTTP {status}: nope"


async def test_timeout_is_retried() -> None:
    outcome, calls, delays = await _run([httpx.ReadTimeout("slow"), OK])
    assert outcome.ok and calls == 2 and delays == [1.0] and outcome.retries == 1


async def test_timeouts_until_the_last_attempt_name_the_timeout() -> None:
    outcome, calls, delays = await _run([httpx.ConnectTimeout("slow")] * 3)
    assert calls == 3 and delays == [1.0, 2.0]
    assert outcome.error == "exa: timed out after 30s; gave up after 3 attempts"
    assert outcome.retries == 2


async def test_a_policy_can_opt_out_of_timeout_retries() -> None:
    policy = RetryPolicy(retry_timeouts=False)
    outcome, calls, delays = await _run([httpx.ReadTimeout("slow"), OK], policy)
    assert calls == 1 and delays == [] and outcome.error == "exa: timed out after 30s"


def test_retry_policy_rejects_zero_attempts() -> None:
    with pytest.raises(ValueError, match="attempts must be >= 1"):
        RetryPolicy(attempts=0)


def test_research_engines_get_longer_timeouts() -> None:
    timeouts = {name: make_engine(name, env={spec.key_env: "k"}).timeout
                for name, spec in ENGINES.items()}
    assert timeouts["parallel"] == timeouts["perplexity"] == 60.0
    assert timeouts["exa"] == 30.0


async def test_outcome_unpacks_like_a_tuple() -> None:
    outcome, *_ = await _run([OK])
    results, error, latency = outcome
    assert (results, error, latency) == (outcome.results, None, outcome.latency_s)


def test_repr_never_shows_the_key() -> None:
    client = make_engine("exa", env={"EXA_API_KEY": KEY})
    assert KEY not in repr(client)
    assert "key=set" in repr(client)


def test_negative_snippet_chars_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="snippet_chars must be >= 0"):
        make_engine("exa", env={"EXA_API_KEY": KEY}, snippet_chars=-1)
