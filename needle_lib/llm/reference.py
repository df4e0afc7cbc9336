"""The built-in ``reference`` model: a perfect-recall oracle served in-process over httpx.

It is a transport rather than a shortcut around the client so the oracle exercises exactly
the request building, response parsing and result recording that real models go through;
a benchmark that scores the reference below 100% has a bug in that path, not in a model.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

import httpx

from needle_lib.jsonio import JSONObject, json_object
from needle_lib.tokens import counted_tokens

#: Receives the request's messages (each a JSON object) and returns the answer text; raise
#: ValueError to reject.
AnswerFn = Callable[[list[JSONObject]], str]


def _error(status: int, message: str) -> httpx.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return httpx.Response(status, json=body)


class ReferenceTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Answers ``/chat/completions`` requests by calling ``answer(messages)``."""

    def __init__(self, answer: AnswerFn) -> None:
        self._answer = answer

    def _respond(self, request: httpx.Request, body: bytes) -> httpx.Response:
        if not request.url.path.endswith("/chat/completions"):
            return _error(
                404, f"the reference model only serves /chat/completions, not {request.url.path}"
            )
        try:
            payload = json_object(json.loads(body))
        except ValueError as exc:
            return _error(400, f"malformed chat request: {exc}")
        listed = payload.get("messages") if payload is not None else None
        messages = [m for m in listed if isinstance(m, dict)] \
            if isinstance(listed, list) else []
        if payload is None or not isinstance(listed, list) or len(messages) < len(listed):
            return _error(400, "malformed chat request: 'messages' must be a list of objects")
        try:
            content = self._answer(messages)
        except ValueError as exc:
            return _error(400, str(exc))
        # Counted like a real server counts: the whole prompt, in the reference vocabulary.
        # The counts are remembered on disk (the oracle sees the same prompts every run), so
        # a warm run never tokenizes an 86K-token prompt again, nor loads the tokenizer.
        prompt = sum(counted_tokens(str(m.get("content") or "")) for m in messages)
        completion = counted_tokens(content)
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-reference-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": payload.get("model", "reference"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            },
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._respond(request, request.read())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self._respond(request, await request.aread())
