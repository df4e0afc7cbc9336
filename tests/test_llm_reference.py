"""The in-process reference oracle: served through the real client path, sync and async."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from needle_lib.llm import (
    LLMHTTPError,
    ReferenceTransport,
    RetryPolicy,
    make_async_chat_client,
    make_chat_client,
    resolve_model,
)
from needle_lib.tokens import count_tokens

MESSAGES = [{"role": "user", "content": "What is on line 3 of a.py?"}]


class Oracle:
    """Answers with the question reversed; refuses questions mentioning 'unknown'."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.seen.append(messages)
        question = messages[-1]["content"]
        if "unknown" in question:
            raise ValueError(f"no expected answer for {question!r}")
        return question[::-1]


@pytest.fixture
def reference() -> Any:
    return resolve_model("reference")


def test_reference_sync_round_trip(reference) -> None:
    oracle = Oracle()
    with make_chat_client(reference, answer=oracle) as client:
        result = client.complete(MESSAGES)
    assert result.content == MESSAGES[0]["content"][::-1]
    assert result.finish_reason == "stop" and result.model == "reference"
    # counted like a Qwen3.6 server counts: What/ is/ on/ line/ 3/ of/ a/.py/?
    assert result.usage["prompt_tokens"] == count_tokens(MESSAGES[0]["content"]) == 10
    assert result.usage["total_tokens"] == (
        result.usage["prompt_tokens"] + result.usage["completion_tokens"]
    )
    assert oracle.seen == [MESSAGES]  # the oracle saw exactly what the client sent


async def test_reference_async_round_trip(reference) -> None:
    async with make_async_chat_client(reference, answer=Oracle()) as client:
        result = await client.complete([{"role": "user", "content": "abc"}])
    assert result.content == "cba" and result.attempts == 1


def test_answer_value_error_is_a_400_without_retry(reference) -> None:
    oracle = Oracle()
    retry = RetryPolicy(attempts=3, base_delay=0.0)
    with (
        make_chat_client(reference, answer=oracle, retry=retry) as client,
        pytest.raises(LLMHTTPError) as info,
    ):
        client.complete([{"role": "user", "content": "unknown file"}])
    assert info.value.status == 400
    assert "no expected answer for 'unknown file'" in str(info.value)
    assert len(oracle.seen) == 1


async def test_answer_value_error_async(reference) -> None:
    async with make_async_chat_client(reference, answer=Oracle()) as client:
        with pytest.raises(LLMHTTPError, match="no expected answer"):
            await client.complete([{"role": "user", "content": "unknown"}])


def test_reference_without_answer_is_refused(reference) -> None:
    with pytest.raises(ValueError, match="needs an answer function"):
        make_chat_client(reference)
    with pytest.raises(ValueError, match="needs an answer function"):
        make_async_chat_client(reference)


def test_transport_rejects_malformed_requests() -> None:
    with httpx.Client(transport=ReferenceTransport(Oracle())) as http:
        bad_json = http.post("http://reference.invalid/v1/chat/completions", content=b"{nope")
        wrong_path = http.post("http://reference.invalid/v1/embeddings", json={"input": "x"})
    assert bad_json.status_code == 400 and "malformed" in bad_json.json()["error"]["message"]
    assert wrong_path.status_code == 404


@pytest.mark.parametrize("body", [[1, 2], {"messages": "hi"},
                                  {"messages": [{"role": "user", "content": "x"}, "hi"]}])
def test_transport_names_a_request_that_is_not_a_list_of_message_objects(body) -> None:
    with httpx.Client(transport=ReferenceTransport(Oracle())) as http:
        answer = http.post("http://reference.invalid/v1/chat/completions", json=body)
    assert answer.status_code == 400
    assert "'messages' must be a list of objects" in answer.json()["error"]["message"]


def test_non_reference_config_uses_given_transport(tmp_path: Path) -> None:
    config = resolve_model("plain", {"base_url": "http://llm.test"}, models_dir=tmp_path)
    served = ReferenceTransport(lambda messages: "via injected transport")
    with make_chat_client(config, transport=served) as client:
        assert client.complete(MESSAGES).content == "via injected transport"
