"""The loopback fakes answer as a real server does: at once, on a kept-alive connection."""

from __future__ import annotations

import httpx

from needle_lib.testing.openai_server import FakeOpenAIServer


def test_a_loopback_server_sends_without_waiting_for_the_clients_ack() -> None:
    """Its answer goes out in two writes (headers, body). Under Nagle's algorithm the body
    waited for the client's delayed ACK of the headers (40 ms on Linux), so a
    "zero-latency" fake answered in ~45 ms; its connections disable Nagle, as real servers'
    do."""
    with FakeOpenAIServer("wrong") as server:
        assert server._server.RequestHandlerClass.disable_nagle_algorithm is True
        with httpx.Client() as client:
            for _ in range(2):
                answer = client.post(
                    f"{server.url}/v1/chat/completions",
                    json={"messages": [{"role": "user", "content": "Hi"}]},
                )
                assert answer.json()["choices"][0]["message"]["content"].startswith("x0 = 0")
        assert server.connections == 1  # both requests on one kept-alive connection
