"""A loopback OpenAI-compatible chat server with scriptable behaviour.

It speaks real HTTP on 127.0.0.1, so tests and benchmarks exercise the same client path as
a run against LM Studio or llama.cpp. Behaviours cover what real servers do to a harness:
answer right, answer wrong, re-indent everything, fail with 500, answer with an HTML page
or broken JSON, silently truncate a long prompt (Ollama), and take time (``latency``) with a
bounded number of ``slots``. ``usage.prompt_tokens`` is counted with the reference
tokenizer, as a server running a Qwen3.5/3.6 model would count it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from needle_lib.recall.reference import reference_answer
from needle_lib.testing.loopback import LoopbackServer, Response
from needle_lib.tokens import count_tokens

Behaviour = Callable[[list[dict]], str]


def _wrong(messages: list[dict]) -> str:
    return "\n".join(f"x{i} = {i}" for i in range(20))


#: Behaviour → the context it keeps: Ollama's OpenAI-compatible endpoint keeps only the last
#: ``num_ctx`` tokens (4,096 by default) of a longer prompt and answers as if nothing happened.
TRUNCATING = {"truncate": 4096}
BEHAVIOURS: dict[str, Behaviour] = {
    "perfect": reference_answer,
    "wrong": _wrong,
    "truncate": _wrong,  # the model saw the task but not the corpus
    "reindent": lambda messages: "\n".join(
        "  " + line.strip() if line.strip() else line
        for line in reference_answer(messages).split("\n")
    ),
}
FAILURES = {
    "http500": (500, "application/json", b'{"error": {"message": "internal error"}}'),
    "html": (200, "text/html", b"<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>"),
    "broken-json": (200, "application/json", b'{"choices": [{"message": {"content": "a'),
    # llama.cpp's answer when the prompt does not fit the loaded context
    "overflow": (400, "application/json", json.dumps({"error": {
        "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 83210,
        "n_ctx": 4096, "message": "request (83210 tokens) exceeds the available context size "
                                  "(4096 tokens), try increasing it"}}).encode()),
}


@dataclass
class ServerStats:
    requests: int = 0
    max_tokens_seen: list[int] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeOpenAIServer(LoopbackServer):
    """``with FakeOpenAIServer("perfect") as server: server.url``."""

    def __init__(self, behaviour: str = "perfect", *, latency: float = 0.0,
                 slots: int | None = None) -> None:
        if behaviour not in BEHAVIOURS and behaviour not in FAILURES:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        self.behaviour = behaviour
        self.latency = latency
        self.stats = ServerStats()
        self._slots = threading.Semaphore(slots) if slots else None
        super().__init__()

    def _respond(self, body: dict[str, Any]) -> Response:
        if self.behaviour in FAILURES:
            return FAILURES[self.behaviour]
        messages = body.get("messages", [])
        content = BEHAVIOURS[self.behaviour](messages)
        prompt = sum(count_tokens(str(m.get("content") or "")) for m in messages)
        prompt = min(prompt, TRUNCATING.get(self.behaviour, prompt))
        answer = count_tokens(content)
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": answer,
                      "total_tokens": prompt + answer},
        }
        return 200, "application/json", json.dumps(completion).encode()

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        request = json.loads(body or b"{}")
        with self.stats.lock:
            self.stats.requests += 1
            self.stats.max_tokens_seen.append(
                request.get("max_tokens") or request.get("max_completion_tokens") or 0
            )
            self.stats.auth_headers.append(headers.get("Authorization", ""))
        if self._slots:
            with self._slots:
                time.sleep(self.latency)
        elif self.latency:
            time.sleep(self.latency)
        return self._respond(request)


def main() -> None:
    """``python -m needle_lib.testing.openai_server BEHAVIOUR [LATENCY] [SLOTS]``: serve
    until interrupted, printing the URL (for manual smoke tests and kill -9 drills)."""
    import sys

    args = sys.argv[1:]
    server = FakeOpenAIServer(
        args[0] if args else "perfect",
        latency=float(args[1]) if len(args) > 1 else 0.0,
        slots=int(args[2]) if len(args) > 2 else None,
    )
    with server:
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
