"""RelevanceJudge over real httpx requests (respx): config, caching, errors, concurrency,
the query profile, today's date, the evidence cut and truncated answers.

No network: every request goes to a respx route on a fake host. Profile requests are told
apart by their system prompt and served by their own route (``mock_profiles``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from needle_lib.judge.cache import JudgeCache
from needle_lib.judge.config import DEFAULT_JUDGE_BASE_URL, DEFAULT_JUDGE_MODEL, judge_model_config
from needle_lib.judge.judge import RelevanceJudge
from needle_lib.judge.profile import SYSTEM_PROMPT as PROFILE_PROMPT
from needle_lib.judge.profile import QueryProfile
from needle_lib.judge.verdict import JudgeError, Verdict
from needle_lib.llm import AsyncChatClient, RetryPolicy
from needle_lib.search.types import SearchResult
from needle_lib.tomlconf import ConfigError

BASE = "https://judge.test"
URL = f"{BASE}/v1/chat/completions"
SECRET = "sk-or-judge-SECRET-789"
QUERY = "mars rover landing"
TODAY = date(2026, 7, 2)
RESULT = SearchResult(
    url="https://www.x.com/a/", title="Rover lands", snippet="Touched down at 04:12 UTC.",
    published_date="2026-07-01",
)
PROFILE = {"query_type": "specific", "query_domain": "news", "main_aspects": ["the landing"],
           "aux_aspects": ["landing site"], "content_archetype": "ephemeral"}
GATES = {"integrity": "pass", "freshness": "pass", "staleness": "pass", "domain": "n/a",
         "operators": "n/a"}


def completion(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "test/judge",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
    }


def rating_response(rating: int = 3, label: str = "HM") -> httpx.Response:
    verdict = {"reasoning": "fits", **GATES, "rating": rating, "label": label}
    return httpx.Response(200, json=completion(json.dumps(verdict)))


def mock_profiles(profile: dict[str, Any] | None = None) -> respx.Route:
    """Serve profile requests (matched before the verdict route, which tests add after)."""
    return respx.post(URL, content__contains=PROFILE_PROMPT[:30]).mock(
        return_value=httpx.Response(200, json=completion(json.dumps(profile or PROFILE)))
    )


def user_turn(request: httpx.Request) -> str:
    return json.loads(request.content)["messages"][-1]["content"]


async def no_sleep(_: float) -> None:
    return None


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    return {"NEEDLE_JUDGE_BASE_URL": BASE}


@pytest.fixture
async def make_judge(
    tmp_path: Path, env: dict[str, str]
) -> AsyncIterator[Callable[..., RelevanceJudge]]:
    """Judges on one cache file; each judge gets its own client, as separate runs would."""
    made: list[RelevanceJudge] = []

    def build(model: str = "test/judge", *, concurrency: int = 8) -> RelevanceJudge:
        config = judge_model_config(model, environ=env, models_dir=tmp_path)
        client = AsyncChatClient(config, retry=RetryPolicy(attempts=3), sleep=no_sleep)
        judge = RelevanceJudge(
            client, cache=JudgeCache(tmp_path / "judge.sqlite3"), concurrency=concurrency,
            today=lambda: TODAY,
        )
        made.append(judge)
        return judge

    yield build
    for judge in made:
        await judge.aclose()


# --- config --------------------------------------------------------------------------------


def test_config_defaults(tmp_path: Path) -> None:
    config = judge_model_config(environ={}, models_dir=tmp_path)
    assert config.name == DEFAULT_JUDGE_MODEL
    assert config.base_url == DEFAULT_JUDGE_BASE_URL
    assert config.api_key_env == "OPENROUTER_API_KEY"
    assert config.temperature == 0.0
    # a reasoning model spends most of its budget before it writes the verdict
    assert config.max_tokens >= 16_000 and config.timeout >= 120
    assert config.note is None


def test_config_budget_from_the_environment(tmp_path: Path) -> None:
    environ = {"NEEDLE_JUDGE_MAX_TOKENS": "4096"}
    assert judge_model_config(environ=environ, models_dir=tmp_path).max_tokens == 4096
    for bad in ("lots", "0", "-5"):
        with pytest.raises(ConfigError, match=r"NEEDLE_JUDGE_MAX_TOKENS must be a positive"):
            judge_model_config(environ={"NEEDLE_JUDGE_MAX_TOKENS": bad}, models_dir=tmp_path)


def test_config_flag_beats_env_beats_default(tmp_path: Path) -> None:
    environ = {"NEEDLE_JUDGE_MODEL": "env/model", "NEEDLE_JUDGE_BASE_URL": "http://h:1"}
    assert judge_model_config(environ=environ, models_dir=tmp_path).name == "env/model"
    flagged = judge_model_config("flag/model", environ=environ, models_dir=tmp_path)
    assert (flagged.name, flagged.base_url) == ("flag/model", "http://h:1")


def test_config_rejects_a_bad_base_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="NEEDLE_JUDGE_BASE_URL"):
        judge_model_config(environ={"NEEDLE_JUDGE_BASE_URL": "judge.test"}, models_dir=tmp_path)


def test_config_name_can_be_a_model_config(tmp_path: Path) -> None:
    (tmp_path / "local-judge.toml").write_text(
        'name = "qwen3-4b"\nbase_url = "http://127.0.0.1:1234"\nmax_tokens = 900\n',
        encoding="utf-8",
    )
    config = judge_model_config("local-judge", environ={}, models_dir=tmp_path)
    assert (config.name, config.base_url, config.max_tokens) == (
        "qwen3-4b",
        "http://127.0.0.1:1234",
        900,
    )


def test_missing_key_names_the_variable_not_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "")
    config = judge_model_config(environ={}, models_dir=tmp_path)
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        AsyncChatClient(config)


# --- rating --------------------------------------------------------------------------------


@respx.mock
async def test_rate_sends_the_pair_in_context_and_returns_a_verdict(make_judge: Callable) -> None:
    profiles = mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response(4, "SM"))
    judge = make_judge()
    verdict = await judge.rate(QUERY, RESULT, today=date(2026, 7, 2))
    assert verdict == Verdict(rating=4, label="FullyM", reasoning="fits", cached=False,
                              gates=GATES)
    request = route.calls.last.request
    body = json.loads(request.content)
    assert body["model"] == "test/judge" and body["temperature"] == 0.0
    prompt = user_turn(request)
    for text in (QUERY, RESULT.url, RESULT.title, RESULT.snippet, "2026-07-01",
                 "Today's date: 2026-07-02", '"content_archetype": "ephemeral"'):
        assert text in prompt
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(judge)
    assert profiles.call_count == 1 and f"<query>\"{QUERY}\"</query>" in user_turn(
        profiles.calls.last.request)
    assert (judge.requests, judge.judged, judge.failures, judge.cache_hits) == (2, 1, 0, 0)
    assert (judge.profile_requests, judge.profile_errors) == (1, 0)


@respx.mock
async def test_one_profile_per_query_shared_by_its_results_and_later_runs(
    make_judge: Callable,
) -> None:
    profiles = mock_profiles()
    respx.post(URL).mock(return_value=rating_response())
    items = [SearchResult(f"https://x.com/{i}", "t", "s") for i in range(5)]
    judge = make_judge()
    await judge.rate_many(QUERY, items)
    await judge.rate_many("another query", items[:1])
    assert profiles.call_count == 2
    assert await judge.profile(QUERY) == QueryProfile(
        query_type="specific", query_domain="news", operators=(),
        main_aspects=("the landing",), aux_aspects=("landing site",),
        content_archetype="ephemeral",
    )
    later = make_judge()  # a later run: the profile comes from the disk cache
    assert (await later.profile(QUERY)).content_archetype == "ephemeral"
    assert profiles.call_count == 2 and later.profile_cache_hits == 1


@respx.mock
async def test_a_made_profile_is_kept_without_the_task_that_made_it(
    make_judge: Callable,
) -> None:
    """A 20,000-query run kept every profile's finished task (its context and coroutine):
    megabytes. The value stays, so later results of the query ask nothing again."""
    profiles = mock_profiles()
    respx.post(URL).mock(return_value=rating_response())
    judge = make_judge()
    first, second = await asyncio.gather(judge.profile(QUERY), judge.profile(QUERY))
    assert first is second and profiles.call_count == 1
    held = [value for table in vars(judge).values() if isinstance(table, dict)
            for value in table.values()]
    assert first in held and not any(isinstance(value, asyncio.Task) for value in held)
    await judge.rate(QUERY, RESULT)
    assert profiles.call_count == 1 and judge.profile_requests == 1


@respx.mock
async def test_operators_in_the_profile_are_parsed_not_asked(make_judge: Callable) -> None:
    mock_profiles()
    judge = make_judge()
    profile = await judge.profile('fed minutes site:federalreserve.gov "rate cut" after:2026-06-01')
    assert profile is not None
    assert profile.operators == ("site:federalreserve.gov", "after:2026-06-01", '"rate cut"')


@respx.mock
async def test_a_failed_profile_means_judging_without_one(make_judge: Callable) -> None:
    mock_profiles({"query_type": "vague"})
    route = respx.post(URL).mock(return_value=rating_response())
    judge = make_judge()
    assert (await judge.rate(QUERY, RESULT)).rating == 3
    assert "Query profile: unavailable" in user_turn(route.calls.last.request)
    assert (judge.profile_errors, judge.failures, judge.judged) == (1, 0, 1)


@respx.mock
async def test_today_is_part_of_what_a_verdict_depends_on(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    judge = make_judge()
    await judge.rate(QUERY, RESULT)  # the judge's clock: TODAY
    assert (await judge.rate(QUERY, RESULT, today=TODAY)).cached
    assert not (await judge.rate(QUERY, RESULT, today=date(2026, 9, 1))).cached
    assert route.call_count == 2


@respx.mock
async def test_evidence_beyond_snippet_chars_is_cut_with_a_note(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    long = SearchResult("https://x.com/long", "t", "alpha " * 50 + "omega " * 30)
    await make_judge().rate(QUERY, long, snippet_chars=300)
    prompt = user_turn(route.calls.last.request)
    assert "alpha " * 50 in prompt and "omega" not in prompt
    assert "[… 30 more words (180 characters) not shown]" in prompt


@respx.mock
async def test_second_run_is_served_from_cache(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    first = await make_judge().rate(QUERY, RESULT)
    later = make_judge()  # a later run: new client, same cache file
    again = await later.rate(QUERY, RESULT)
    assert route.call_count == 1
    assert (again.rating, again.cached, first.cached) == (first.rating, True, False)
    assert (later.requests, later.cache_hits, later.judged) == (0, 1, 1)
    assert later.stats()["judged_pairs"] == 1 and later.stats()["judge_requests"] == 0


@respx.mock
async def test_cache_is_keyed_by_model(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    await make_judge("model/a").rate(QUERY, RESULT)
    other = make_judge("model/b")
    assert not (await other.rate(QUERY, RESULT)).cached
    assert route.call_count == 2
    assert [json.loads(c.request.content)["model"] for c in route.calls] == ["model/a", "model/b"]


@respx.mock
async def test_cache_is_keyed_by_prompt_version(
    make_judge: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    await make_judge().rate(QUERY, RESULT)
    monkeypatch.setattr("needle_lib.judge.judge.JUDGE_PROMPT_VERSION", "reworded")
    assert not (await make_judge().rate(QUERY, RESULT)).cached
    assert route.call_count == 2


@respx.mock
async def test_url_spellings_hit_one_cache_entry(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=rating_response())
    judge = make_judge()
    await judge.rate(QUERY, SearchResult("https://www.x.com/a/", RESULT.title, RESULT.snippet))
    verdict = await judge.rate(QUERY, SearchResult("http://x.com/a", RESULT.title, RESULT.snippet))
    assert verdict.cached and route.call_count == 1


# --- failures --------------------------------------------------------------------------------


@respx.mock
async def test_server_error_after_retries_is_a_counted_failure(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(return_value=httpx.Response(500, text=f"boom {SECRET}"))
    judge = make_judge()
    with pytest.raises(JudgeError) as info:
        await judge.rate(QUERY, RESULT)
    message = str(info.value)
    assert "HTTP 500" in message and QUERY in message and RESULT.url in message
    assert SECRET not in message
    assert route.call_count == 3  # the client's retries, then give up
    assert (judge.failures, judge.judged, judge.requests) == (1, 0, 2)  # profile + verdict
    route.mock(return_value=rating_response())
    assert not (await judge.rate(QUERY, RESULT)).cached  # failures are not cached
    assert route.call_count == 4


@respx.mock
async def test_garbage_answer_is_an_error_not_a_zero(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(
        return_value=httpx.Response(200, json=completion("I think this is relevant."))
    )
    judge = make_judge()
    with pytest.raises(JudgeError, match="no JSON object") as info:
        await judge.rate(QUERY, RESULT)
    assert info.value.url == RESULT.url and info.value.query == QUERY
    route.mock(return_value=rating_response(2, "MM"))
    assert (await judge.rate(QUERY, RESULT)).rating == 2
    assert judge.failures == 1 and route.call_count == 2


@pytest.mark.parametrize("content", ['{"reasoning": "The page covers', None])
@respx.mock
async def test_a_truncated_answer_is_an_error_that_says_so(
    make_judge: Callable, content: str | None
) -> None:
    """A reasoning model that spends its budget thinking returns no verdict (content null)."""
    mock_profiles()
    cut = completion("", "length")
    cut["choices"][0]["message"]["content"] = content
    route = respx.post(URL).mock(return_value=httpx.Response(200, json=cut))
    judge = make_judge()
    with pytest.raises(JudgeError, match=r"truncated.*max_tokens budget \(32768\).*"
                                         r"NEEDLE_JUDGE_MAX_TOKENS"):
        await judge.rate(QUERY, RESULT)
    assert json.loads(route.calls.last.request.content)["max_tokens"] == 32768
    assert judge.failures == 1
    route.mock(return_value=rating_response())
    assert not (await judge.rate(QUERY, RESULT)).cached  # nothing was stored for it


@respx.mock
async def test_rate_many_returns_errors_as_data_in_order(make_judge: Callable) -> None:
    mock_profiles()
    def answer(request: httpx.Request) -> httpx.Response:
        if "bad.example" in user_turn(request):
            return httpx.Response(200, json=completion('{"rating": 9, "label": "HM"}'))
        return rating_response()

    respx.post(URL).mock(side_effect=answer)
    judge = make_judge()
    items = [
        SearchResult("https://good.example/1", "t", "s"),
        SearchResult("https://bad.example/2", "t", "s"),
        SearchResult("https://good.example/3", "t", "s"),
    ]
    out = await judge.rate_many(QUERY, items)
    assert [type(v) for v in out] == [Verdict, JudgeError, Verdict]
    assert isinstance(out[1], JudgeError) and out[1].url == "https://bad.example/2"
    assert (judge.judged, judge.failures) == (2, 1)


# --- concurrency -----------------------------------------------------------------------------


class InFlight:
    """A respx side effect that records how many requests are open at once."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay
        self.now = 0
        self.peak = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(self.delay)
            await self.release.wait()
        finally:
            self.now -= 1
        return rating_response()


@respx.mock
async def test_concurrency_bound_is_respected(make_judge: Callable) -> None:
    mock_profiles()
    tracker = InFlight()
    route = respx.post(URL).mock(side_effect=tracker)
    judge = make_judge(concurrency=3)
    items = [SearchResult(f"https://x.com/{i}", "t", "s") for i in range(12)]
    out = await judge.rate_many(QUERY, items)
    assert all(isinstance(v, Verdict) for v in out)
    assert route.call_count == 12 and tracker.peak == 3


def test_concurrency_must_be_positive(tmp_path: Path, env: dict[str, str]) -> None:
    client = AsyncChatClient(judge_model_config("m", environ=env, models_dir=tmp_path))
    with pytest.raises(ValueError, match="at least 1"):
        RelevanceJudge(client, concurrency=0)


@respx.mock
async def test_identical_pairs_in_flight_are_judged_once(make_judge: Callable) -> None:
    mock_profiles()
    route = respx.post(URL).mock(side_effect=InFlight())
    judge = make_judge()
    twins = [SearchResult(u, RESULT.title, RESULT.snippet) for u in ("https://x.com/a",) * 4]
    twins.append(SearchResult("http://www.x.com/a/", RESULT.title, RESULT.snippet))
    out = await judge.rate_many(QUERY, twins)
    assert route.call_count == 1
    assert all(v == out[0] for v in out) and not out[0].cached
    assert (judge.requests, judge.shared, judge.judged, judge.cache_hits) == (2, 4, 5, 0)


@respx.mock
async def test_a_cancelled_waiter_does_not_cancel_the_shared_request(
    make_judge: Callable,
) -> None:
    mock_profiles()
    tracker = InFlight()
    tracker.release.clear()
    route = respx.post(URL).mock(side_effect=tracker)
    judge = make_judge()
    first = asyncio.create_task(judge.rate(QUERY, RESULT))
    second = asyncio.create_task(judge.rate(QUERY, RESULT))
    while tracker.now == 0:
        await asyncio.sleep(0)
    first.cancel()
    tracker.release.set()
    assert (await second).rating == 3
    assert first.cancelled() and route.call_count == 1


def test_generation_llm_has_its_own_env_vars_and_openrouter_defaults() -> None:
    from needle_lib.llm.roles import generation_model_config

    default = generation_model_config(environ={})
    assert default.name == DEFAULT_JUDGE_MODEL and default.base_url == DEFAULT_JUDGE_BASE_URL
    assert default.api_key_env == "OPENROUTER_API_KEY"
    local = generation_model_config(environ={"NEEDLE_LLM_MODEL": "qwen3-local",
                                             "NEEDLE_LLM_BASE_URL": "http://127.0.0.1:8080"})
    assert (local.name, local.base_url) == ("qwen3-local", "http://127.0.0.1:8080")
    with pytest.raises(ConfigError, match="NEEDLE_LLM_BASE_URL must start with http"):
        generation_model_config(environ={"NEEDLE_LLM_BASE_URL": "localhost:8080"})


async def test_a_judge_keeps_a_connection_alive_per_call_in_flight(tmp_path, monkeypatch):
    """httpx keeps 20 idle connections by default: a judge at concurrency 30 closed the rest
    after each burst and opened them again (a TCP and TLS handshake per call, on a real
    provider). Its pool now keeps as many as it may have calls in flight."""
    from needle_lib.testing.search_server import FakeSearchServer

    with FakeSearchServer(latency={"judge": 0.2}) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        judge = RelevanceJudge.create(concurrency=30, cache_path=tmp_path / "judge.sqlite3")
        for burst in range(3):
            items = [SearchResult(url=f"https://example.com/{burst}/{i}", title="t",
                                  snippet="s") for i in range(30)]
            verdicts = await judge.rate_many(f"query {burst}", items)
            assert all(isinstance(v, Verdict) for v in verdicts)
        await judge.aclose()
        assert server.max_in_flight["judge"] <= 30
        assert server.connections <= 30, server.connections
