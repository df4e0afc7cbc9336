"""Chat client: request bodies, response parsing, retries, errors, context overflow.

Mocked HTTP goes through respx (httpx's real request path, no sockets); the loopback tests
run a real ``http.server`` on 127.0.0.1 so one path covers actual sockets end to end.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from needle_lib.llm import (
    AsyncChatClient,
    ChatClient,
    ContextOverflowError,
    LLMBadResponseError,
    LLMConnectionError,
    LLMHTTPError,
    ModelConfig,
    PromptTruncatedError,
    RetryPolicy,
    resolve_model,
)
from needle_lib.llm.protocol import NO_THINK_PREFILL, chat_url
from needle_lib.recall.results import answer_fields

BASE = "https://llm.test:1234"
URL = f"{BASE}/v1/chat/completions"
SECRET = "sk-client-SECRET-456"
MESSAGES = [{"role": "system", "content": "Be exact."}, {"role": "user", "content": "Line 7?"}]
FAST = RetryPolicy(attempts=3, base_delay=0.01)


def completion(content: Any = "answer", **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, **extra.pop("message", {})}
    return {
        "id": "chatcmpl-1",
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
        **extra,
    }


def make_config(tmp_path: Path, **overrides: Any) -> ModelConfig:
    return resolve_model("test/model", {"base_url": BASE, **overrides}, models_dir=tmp_path)


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def client_for(config: ModelConfig, sleep: SleepRecorder | None = None) -> ChatClient:
    return ChatClient(config, retry=FAST, sleep=sleep or SleepRecorder())


def sent_body(route: respx.Route) -> dict[str, Any]:
    return json.loads(route.calls.last.request.content)


# --- request building -------------------------------------------------------------------


@pytest.mark.parametrize(
    "base",
    [BASE, f"{BASE}/", f"{BASE}/v1", f"{BASE}/v1/"],
)
def test_base_url_with_or_without_v1(base: str) -> None:
    assert chat_url(base) == URL


def test_defaults_send_only_the_core_fields(tmp_path: Path) -> None:
    with respx.mock:
        route = respx.post(URL).mock(return_value=httpx.Response(200, json=completion()))
        with client_for(make_config(tmp_path)) as client:
            client.complete(MESSAGES)
    assert sent_body(route) == {
        "model": "test/model",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 6000,
        "stream": False,
    }
    assert "authorization" not in route.calls.last.request.headers


def test_every_knob_reaches_the_request(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        api_key=SECRET,
        temperature=0.7,
        max_tokens=321,
        use_max_completion_tokens=True,
        reasoning_effort="low",
        prefill_no_think=True,
        stop=["<end_of_turn>", "<start_of_turn>"],
        timeout=12.5,
    )
    with respx.mock:
        route = respx.post(URL).mock(return_value=httpx.Response(200, json=completion()))
        with client_for(config) as client:
            client.complete(MESSAGES)
    request = route.calls.last.request
    assert request.extensions["timeout"]["read"] == 12.5
    body = sent_body(route)
    assert body["temperature"] == 0.7
    assert body["max_completion_tokens"] == 321 and "max_tokens" not in body
    assert body["reasoning_effort"] == "low"
    assert body["stop"] == ["<end_of_turn>", "<start_of_turn>"]
    assert body["messages"] == [*MESSAGES, {"role": "assistant", "content": NO_THINK_PREFILL}]
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_per_call_max_tokens_overrides_config(tmp_path: Path) -> None:
    with respx.mock:
        route = respx.post(URL).mock(return_value=httpx.Response(200, json=completion()))
        with client_for(make_config(tmp_path, max_tokens=50)) as client:
            client.complete(MESSAGES, max_tokens=7)
    assert sent_body(route)["max_tokens"] == 7


# --- response parsing -------------------------------------------------------------------


def test_result_fields_and_record(tmp_path: Path) -> None:
    timings = {"prompt_n": 12, "predicted_per_second": 40.5}
    body = completion(
        "  line seven ", message={"reasoning_content": "thinking..."}, timings=timings
    )
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, json=body))
        with client_for(make_config(tmp_path)) as client:
            result = client.complete(MESSAGES)
    assert result.content == "  line seven "
    assert result.reasoning == "thinking..."
    assert result.finish_reason == "stop"
    assert result.usage == body["usage"]
    assert result.timings == timings
    assert result.model == "served-model"
    assert result.attempts == 1
    assert result.latency_s >= 0
    record = json.loads(json.dumps(answer_fields(result)))  # what a dump stores
    assert record["response"] == "  line seven " and record["timings"] == timings


@pytest.mark.parametrize(
    ("message", "content", "reasoning"),
    [
        ({"content": "ans", "reasoning": "r1"}, "ans", "r1"),
        ({"content": "<think>\nhmm\n</think>\n\nans"}, "ans", "hmm"),
        ({"content": None}, "", None),
        ({"content": "plain"}, "plain", None),
    ],
)
def test_reasoning_kept_apart_from_content(tmp_path, message, content, reasoning) -> None:
    body = completion(message.pop("content"), message=message)
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, json=body))
        with client_for(make_config(tmp_path)) as client:
            result = client.complete(MESSAGES)
    assert (result.content, result.reasoning) == (content, reasoning)


@pytest.mark.parametrize(
    ("response", "error", "says"),
    [
        (
            httpx.Response(200, text="<!DOCTYPE html><html><body>LM Studio</body></html>"),
            LLMBadResponseError,
            "HTML",
        ),
        (httpx.Response(200, text='{"choices": [ broken'), LLMBadResponseError, "not valid JSON"),
        (httpx.Response(200, json={"object": "list", "data": []}), LLMBadResponseError, "choices"),
        (httpx.Response(200, json={"choices": []}), LLMBadResponseError, "choices"),
        (
            httpx.Response(200, json=completion([{"type": "text", "text": "x"}])),
            LLMBadResponseError,
            "not a string",
        ),
        (
            httpx.Response(200, json={"error": {"message": "model not loaded"}}),
            LLMHTTPError,
            "model not loaded",
        ),
    ],
)
def test_unusable_200_answers(tmp_path, response, error, says) -> None:
    with respx.mock:
        route = respx.post(URL).mock(return_value=response)
        with client_for(make_config(tmp_path)) as client, pytest.raises(error) as info:
            client.complete(MESSAGES)
    text = str(info.value)
    assert says in text
    assert "test/model" in text and URL in text
    assert route.call_count == 1


# --- retries ----------------------------------------------------------------------------


def test_retries_5xx_then_succeeds(tmp_path: Path) -> None:
    sleep = SleepRecorder()
    with respx.mock:
        route = respx.post(URL).mock(
            side_effect=[
                httpx.Response(500, text="boom"),
                httpx.Response(503, text="loading"),
                httpx.Response(200, json=completion("ok")),
            ]
        )
        with client_for(make_config(tmp_path), sleep) as client:
            result = client.complete(MESSAGES)
    assert result.content == "ok" and result.attempts == 3
    assert route.call_count == 3
    assert sleep.delays == [0.01, 0.02]  # exponential backoff


def test_429_honours_retry_after_and_caps_a_huge_one(tmp_path: Path) -> None:
    sleep = SleepRecorder()
    with respx.mock:
        respx.post(URL).mock(
            side_effect=[
                httpx.Response(429, headers={"Retry-After": "2"}, text="slow down"),
                httpx.Response(429, headers={"Retry-After": "86400"}, text="slow down"),
                httpx.Response(200, json=completion()),
            ]
        )
        with client_for(make_config(tmp_path), sleep) as client:
            client.complete(MESSAGES)
    assert sleep.delays == [2.0, 30.0]


def test_gives_up_after_bounded_attempts(tmp_path: Path) -> None:
    sleep = SleepRecorder()
    with respx.mock:
        route = respx.post(URL).mock(return_value=httpx.Response(502, text="bad gateway"))
        with (
            client_for(make_config(tmp_path), sleep) as client,
            pytest.raises(LLMHTTPError) as info,
        ):
            client.complete(MESSAGES)
    assert route.call_count == 3 and len(sleep.delays) == 2
    assert info.value.status == 502
    assert "HTTP 502" in str(info.value) and "gave up after 3 attempts" in str(info.value)


def test_an_unusable_answer_after_retries_counts_every_attempt(tmp_path: Path) -> None:
    """503, 503, then broken JSON: the error is the third attempt's and says so (it used to
    escape the retry loop unstamped and read "attempts=1")."""
    sleep = SleepRecorder()
    with respx.mock:
        route = respx.post(URL).mock(
            side_effect=[
                httpx.Response(503, text="loading"),
                httpx.Response(503, text="loading"),
                httpx.Response(200, text="{not json"),
            ]
        )
        with (
            client_for(make_config(tmp_path), sleep) as client,
            pytest.raises(LLMBadResponseError) as info,
        ):
            client.complete(MESSAGES)
    assert route.call_count == 3 and len(sleep.delays) == 2
    assert info.value.attempts == 3
    assert "not valid JSON" in str(info.value) and "after 3 attempts" in str(info.value)


def test_no_retry_on_400(tmp_path: Path) -> None:
    sleep = SleepRecorder()
    with respx.mock:
        route = respx.post(URL).mock(
            return_value=httpx.Response(400, json={"error": {"message": "unknown model"}})
        )
        with (
            client_for(make_config(tmp_path), sleep) as client,
            pytest.raises(LLMHTTPError) as info,
        ):
            client.complete(MESSAGES)
    assert route.call_count == 1 and sleep.delays == []
    assert info.value.status == 400 and "unknown model" in str(info.value)


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (httpx.ConnectError("Connection refused"), "may not be running"),
        (httpx.ReadTimeout("timed out"), "9s timeout"),
    ],
)
def test_retries_connection_errors_then_explains(tmp_path: Path, exc, says) -> None:
    sleep = SleepRecorder()
    with respx.mock:
        route = respx.post(URL).mock(side_effect=exc)
        with (
            client_for(make_config(tmp_path, timeout=9.0), sleep) as client,
            pytest.raises(LLMConnectionError) as info,
        ):
            client.complete(MESSAGES)
    assert route.call_count == 3
    assert says in str(info.value) and URL in str(info.value) and "test/model" in str(info.value)


def test_connection_error_recovers(tmp_path: Path) -> None:
    with respx.mock:
        respx.post(URL).mock(
            side_effect=[httpx.ConnectError("refused"), httpx.Response(200, json=completion())]
        )
        with client_for(make_config(tmp_path)) as client:
            assert client.complete(MESSAGES).attempts == 2


# --- context overflow -------------------------------------------------------------------

LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "request (140000 tokens) exceeds the available context size (32768 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 140000,
        "n_ctx": 32768,
    }
}
LLAMA_CPP_OLD = {
    "error": {
        "code": 500,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "server_error",
    }
}
LM_STUDIO = {
    "error": "Trying to keep the first 111490 tokens when context the overflows. However, the "
    "model is loaded with context length of only 32768 tokens, which is not enough. Try to load "
    "the model with a larger context length, or provide a shorter input"
}
LM_STUDIO_MIDGEN = {
    "error": "Reached context length of 32000 tokens with model (arch: gpt-oss) that does not "
    "currently support mid-generation context overflow."
}
VLLM = {
    "object": "error",
    "message": "This model's maximum context length is 16384 tokens. However, you requested "
    "122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length "
    "of the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
OPENAI = {
    "error": {
        "message": "Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
}
OPENAI_LEGACY = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 8227 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 215000 tokens > 200000 maximum",
    },
}


@pytest.mark.parametrize(
    ("status", "body", "limit", "server_prompt"),
    [
        (400, LLAMA_CPP, 32768, 140000),
        (500, LLAMA_CPP_OLD, None, None),
        (400, LM_STUDIO, 32768, 111490),
        (400, LM_STUDIO_MIDGEN, 32000, None),
        (400, VLLM, 16384, 122946),
        (400, OPENAI, None, None),
        (400, OPENAI_LEGACY, 8192, 8227),
        (400, ANTHROPIC, 200000, 215000),
        (200, LM_STUDIO, 32768, 111490),  # error object inside a 200
    ],
    ids=[
        "llama.cpp",
        "llama.cpp-old-500",
        "lm-studio",
        "lm-studio-midgen",
        "vllm",
        "openai",
        "openai-legacy",
        "anthropic",
        "lm-studio-in-200",
    ],
)
def test_context_overflow_wordings(tmp_path, status, body, limit, server_prompt) -> None:
    config = make_config(tmp_path, max_tokens=1500)
    with respx.mock:
        route = respx.post(URL).mock(return_value=httpx.Response(status, json=body))
        with client_for(config) as client, pytest.raises(ContextOverflowError) as info:
            client.complete(MESSAGES, prompt_tokens=100_000)
    error = info.value
    text = str(error)
    assert route.call_count == 1  # resending the same prompt cannot help
    assert (error.server_limit, error.server_prompt_tokens) == (limit, server_prompt)
    assert error.estimated_prompt_tokens == 100_000
    assert "prompt ≈ 100,000 tokens (qwen3.6)" in text
    if limit is not None:
        assert f"server limit {limit} tokens" in text
    assert "lms unload test/model" in text and "lms load test/model --context-length" in text
    assert "--ctx-size" in text and "--max-model-len" in text
    assert URL in text


def test_overflow_suggests_the_smallest_context_that_fits(tmp_path: Path) -> None:
    """An 11K-token prompt is told 16384 (prompt + 2,048 answer tokens), not 131072."""
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(400, json=LLAMA_CPP_OLD))
        with client_for(make_config(tmp_path, max_tokens=1000)) as client:
            for prompt, context in ((1_000, 4096), (11_364, 16384), (15_000, 32768),
                                    (140_000, 262144)):
                with pytest.raises(ContextOverflowError, match=f"--context-length {context}`"):
                    client.complete(MESSAGES, prompt_tokens=prompt)


def served(prompt_tokens: int | None, cached: int | None = None) -> httpx.Response:
    body = completion()
    body["usage"] = None if prompt_tokens is None else {
        "prompt_tokens": prompt_tokens, "completion_tokens": 5,
        "total_tokens": prompt_tokens + 5}
    if cached is not None:
        body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    return httpx.Response(200, json=body)


def test_a_silently_truncated_prompt_is_an_error_naming_both_figures_and_the_fix(
    tmp_path: Path,
) -> None:
    """Ollama keeps the last 4,096 tokens of a 14,000-token prompt and answers normally."""
    with respx.mock:
        route = respx.post(URL).mock(return_value=served(4096, cached=3000))  # OpenAI-style
        client = client_for(make_config(tmp_path, max_tokens=1000))
        with client, pytest.raises(PromptTruncatedError) as info:
            client.complete(MESSAGES, prompt_tokens=14_000)
    error = info.value
    text = str(error)
    assert route.call_count == 1  # the same prompt would be cut the same way
    assert (error.served_prompt_tokens, error.estimated_prompt_tokens) == (4096, 14_000)
    assert "silently truncated" in text
    assert "usage.prompt_tokens = 4,096" in text and "≈ 14,000 tokens (qwen3.6)" in text
    assert "PARAMETER num_ctx 16384" in text and "OLLAMA_CONTEXT_LENGTH=16384" in text
    assert "--ctx-size 16384" in text and URL in text


@pytest.mark.parametrize(
    ("reported", "cached", "estimate"),
    [(12_000, None, 14_000), (None, None, 14_000), (0, None, 14_000), (4096, None, None),
     (150, 13_900, 14_000)],
    ids=["other-tokenizer-within-20%", "no-usage", "zero-usage", "no-estimate",
         "cached-part-reported-apart"],
)
def test_a_full_or_unknown_prompt_count_is_not_truncation(
    tmp_path: Path, reported: int | None, cached: int | None, estimate: int | None
) -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=served(reported, cached))
        with client_for(make_config(tmp_path)) as client:
            assert client.complete(MESSAGES, prompt_tokens=estimate).content == "answer"


@pytest.mark.parametrize(("reported", "timings", "expected"), [
    (180, None, "cache_hit"),  # Ollama's llama-server runner: only the uncached task text
    (180, {"cache_n": 13_820, "prompt_n": 180}, "full"),  # llama.cpp reports the reuse
    (13_990, None, "full"),
], ids=["uncached-count-only", "llama-cpp-cache-n", "full-count"])
def test_a_prefix_cache_hit_is_recorded_not_called_truncation(
    tmp_path: Path, reported: int, timings: dict | None, expected: str
) -> None:
    answer = served(reported)
    body = {**answer.json(), "timings": timings} if timings else answer.json()
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(200, json=body))
        with client_for(make_config(tmp_path)) as client:
            result = client.complete(MESSAGES, prompt_tokens=14_000, tail_tokens=200)
    assert (result.content, result.prompt_count) == ("answer", expected)


def test_a_context_sized_count_is_still_truncation_beside_a_small_tail(tmp_path: Path) -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=served(2048))
        with client_for(make_config(tmp_path)) as client, pytest.raises(PromptTruncatedError):
            client.complete(MESSAGES, prompt_tokens=14_000, tail_tokens=200)


def test_ordinary_400_is_not_an_overflow(tmp_path: Path) -> None:
    body = {"error": {"message": "'messages' must be a list", "code": "invalid_type"}}
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(400, json=body))
        with client_for(make_config(tmp_path)) as client, pytest.raises(LLMHTTPError) as info:
            client.complete(MESSAGES)
    assert not isinstance(info.value, ContextOverflowError)


# --- secrets ----------------------------------------------------------------------------


def test_key_never_in_errors_or_reprs(tmp_path: Path) -> None:
    config = make_config(tmp_path, api_key=SECRET)

    def echo_auth(request: httpx.Request) -> httpx.Response:
        # A hostile/verbose server echoing the credential back in its error body.
        return httpx.Response(401, text=f"invalid key: {request.headers['authorization']}")

    with respx.mock:
        respx.post(URL).mock(side_effect=echo_auth)
        with client_for(config) as client, pytest.raises(LLMHTTPError) as info:
            client.complete(MESSAGES)
        assert SECRET not in repr(client)
    assert info.value.status == 401
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert "invalid key: Bearer ***" in str(info.value)


# --- async client -----------------------------------------------------------------------


async def test_async_client_same_rules(tmp_path: Path) -> None:
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    config = make_config(tmp_path, stop=["END"], max_tokens=10)
    with respx.mock:
        route = respx.post(URL).mock(
            side_effect=[httpx.Response(503), httpx.Response(200, json=completion("a"))]
        )
        async with AsyncChatClient(config, retry=FAST, sleep=record) as client:
            result = await client.complete(MESSAGES)
    assert result.content == "a" and result.attempts == 2 and delays == [0.01]
    assert sent_body(route)["stop"] == ["END"] and sent_body(route)["max_tokens"] == 10


async def test_async_overflow(tmp_path: Path) -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(400, json=VLLM))
        async with AsyncChatClient(make_config(tmp_path), retry=FAST) as client:
            with pytest.raises(ContextOverflowError, match="--max-model-len"):
                await client.complete(MESSAGES)


# --- real loopback server ---------------------------------------------------------------


class _Recorder(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        last = body["messages"][-1]["content"]
        payload = json.dumps(completion(f"echo: {last}")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass


@pytest.fixture
def loopback() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    handler = type("Handler", (_Recorder,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()


def test_loopback_server_end_to_end(tmp_path: Path, loopback, monkeypatch) -> None:
    base, requests = loopback
    monkeypatch.setenv("NEEDLE_LOOPBACK_KEY", SECRET)
    config_file = tmp_path / "loop.toml"
    config_file.write_text(
        f'name = "loop-model"\nbase_url = "{base}/v1/"\napi_key_env = "NEEDLE_LOOPBACK_KEY"\n'
        'max_tokens = 64\nstop = ["###"]\n'
    )
    with ChatClient(resolve_model(str(config_file))) as client:
        result = client.complete(MESSAGES)
    assert result.content == "echo: Line 7?" and result.model == "served-model"
    (request,) = requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == f"Bearer {SECRET}"
    assert request["body"]["model"] == "loop-model"
    assert request["body"]["max_tokens"] == 64 and request["body"]["stop"] == ["###"]


async def test_loopback_async_concurrent(tmp_path: Path, loopback) -> None:
    base, requests = loopback
    config = resolve_model("loop-model", {"base_url": base}, models_dir=tmp_path)
    async with AsyncChatClient(config) as client:
        results = await asyncio.gather(
            *(client.complete([{"role": "user", "content": f"q{i}"}]) for i in range(5))
        )
    assert [r.content for r in results] == [f"echo: q{i}" for i in range(5)]
    assert len(requests) == 5


def test_loopback_refused_port_is_a_connection_error(tmp_path: Path) -> None:
    with socket.socket() as sock:  # reserve a free port, then close it so nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = resolve_model("down", {"base_url": f"http://127.0.0.1:{port}"}, models_dir=tmp_path)
    sleep = SleepRecorder()
    retry = RetryPolicy(attempts=2, base_delay=0.0)
    with (
        ChatClient(config, retry=retry, sleep=sleep) as client,
        pytest.raises(LLMConnectionError) as info,
    ):
        client.complete(MESSAGES)
    assert f"127.0.0.1:{port}" in str(info.value) and "may not be running" in str(info.value)
    assert info.value.attempts == 2 and sleep.delays == [0.0]


# --- a key in clear text (issue 32, item 10) ---------------------------------------------

@pytest.fixture
def fresh_cleartext_warnings() -> Iterator[None]:
    from needle_lib.net.cleartext import forget_warnings

    forget_warnings()
    yield
    forget_warnings()


def test_a_key_sent_over_plain_http_to_another_host_warns_once(fresh_cleartext_warnings):
    """``--base-url http://gpu-box:8000`` over a config that carries a key: every request
    would send the key unencrypted; the user is told once, naming the host (never the key)."""
    from needle_lib.net.cleartext import CleartextKeyWarning

    overridden = resolve_model("m", {"base_url": "http://gpu.example:8000", "api_key": SECRET})
    with pytest.warns(CleartextKeyWarning, match=r"model 'm'.*unencrypted.*gpu\.example:8000") \
            as caught:
        ChatClient(overridden).close()
        AsyncChatClient(overridden)  # the same destination again: no second warning
    assert len(caught) == 1 and SECRET not in str(caught[0].message)


@pytest.mark.parametrize(("base_url", "key"), [
    ("http://127.0.0.1:8000", SECRET), ("http://localhost:1234", SECRET),
    ("http://[::1]:8000", SECRET), ("https://gpu.example", SECRET),
    ("http://gpu.example:8000", None),
])
def test_loopback_https_or_keyless_requests_stay_quiet(fresh_cleartext_warnings, recwarn,
                                                       base_url, key):
    from needle_lib.net.cleartext import CleartextKeyWarning

    ChatClient(resolve_model("m", {"base_url": base_url, "api_key": key})).close()
    assert not [w for w in recwarn if issubclass(w.category, CleartextKeyWarning)]


def test_an_engine_key_over_plain_http_warns_too(fresh_cleartext_warnings):
    from needle_lib.net.cleartext import CleartextKeyWarning
    from needle_lib.search.registry import make_engine

    with pytest.warns(CleartextKeyWarning, match=r"engine 'exa'.*search\.example"):
        make_engine("exa", env={"EXA_API_KEY": SECRET,
                                "NEEDLE_EXA_BASE_URL": "http://search.example"})
