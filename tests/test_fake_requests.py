"""The loopback fakes read a request as a real server would: a body of the wrong shape is
a 400 naming what is wrong, not a crashed handler (a dropped connection the client would
retry and report as a network error)."""

from __future__ import annotations

import httpx
import pytest

from needle_lib.jsonio import JSON
from needle_lib.testing.hub_server import FakeHubServer
from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.testing.search_server import KEYS, FakeSearchServer


@pytest.mark.parametrize(("body", "message"), [
    ([1, 2], "the body must be a JSON object"),
    ({"messages": "hi"}, "'messages' must be a list of objects"),
    ({"messages": [{"role": "user", "content": "x"}, 7]}, "'messages' must be a list"),
])
def test_the_chat_fake_answers_a_malformed_request_with_a_400(body: JSON, message: str) -> None:
    with FakeOpenAIServer("perfect") as server:
        answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 400
    assert message in answer.json()["error"]["message"]


def test_the_chat_fake_answers_broken_json_with_a_400() -> None:
    with FakeOpenAIServer("perfect") as server:
        answer = httpx.post(f"{server.url}/v1/chat/completions", content=b"{nope")
    assert answer.status_code == 400 and "not JSON" in answer.json()["error"]["message"]


@pytest.mark.parametrize("body", [{"query": 7}, {"query": "q", "numResults": "5"}, ["q"]])
def test_the_search_fake_answers_a_malformed_exa_request_with_a_400(body: JSON) -> None:
    header, key = KEYS["exa"]
    with FakeSearchServer() as server:
        answer = httpx.post(f"{server.url}/search", json=body, headers={header: key})
        good = httpx.post(f"{server.url}/search", json={"query": "q"}, headers={header: key})
    assert answer.status_code == 400
    assert good.status_code == 200 and len(good.json()["results"]) == 5


def test_the_search_fake_judge_answers_messages_that_are_not_objects_with_a_400() -> None:
    with FakeSearchServer() as server:
        answer = httpx.post(f"{server.url}/v1/chat/completions",
                            json={"model": "fake-judge", "messages": ["rate this"]})
    assert answer.status_code == 400


@pytest.mark.parametrize(("path", "body", "message"), [
    ("/api/repos/create", {"name": ["x"]}, "'name' (and 'organization', 'type') must be"),
    ("/api/repos/create", b"{nope", "'name' (and 'organization', 'type') must be"),
    ("/api/datasets/me/data/preupload/main", {"files": ["a.txt"]}, "'files' must be a list"),
])
def test_the_hub_fake_answers_a_malformed_upload_request_with_a_400(
        path: str, body: JSON | bytes, message: str) -> None:
    with FakeHubServer({("dataset", "me/data", "a.txt"): b"a"}) as server:
        sent = (httpx.post(server.url + path, content=body) if isinstance(body, bytes)
                else httpx.post(server.url + path, json=body))
    assert sent.status_code == 400 and message in sent.json()["error"]
