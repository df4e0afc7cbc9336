"""A loopback OpenAI-compatible chat server with scriptable behaviour.

It speaks real HTTP on 127.0.0.1, so tests and benchmarks exercise the same client path as
a run against LM Studio or llama.cpp. Behaviours cover what real servers do to a harness:
answer right, answer wrong, re-indent everything, fail with 500, answer with an HTML page
or broken JSON, silently truncate a long prompt (Ollama), count only the tokens a prefix
cache left to evaluate (``cached``: Ollama's llama-server runner), and take time
(``latency``) with a bounded number of ``slots``. ``usage.prompt_tokens`` is counted with
the reference tokenizer, as a server running a Qwen3.5/3.6 model would count it.

``formats=`` takes or refuses ``response_format`` as one kind of server does
(``testing.structured``); every chat request's shape is recorded in
``stats.response_formats``.

``server=`` makes it answer one real server's metadata endpoints in that server's shape
(llama.cpp ``/props`` and ``/v1/models``, vLLM ``/v1/models``, LM Studio
``/api/v0/models``, Ollama ``/api/show``), reporting ``context`` as the loaded context and
``maximum`` as the model's own; other metadata paths get that server's "not found".
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from needle_lib.jsonio import JSON, JSONObject, json_object, loads_untrusted
from needle_lib.recall.reference import reference_answer
from needle_lib.testing.loopback import LoopbackServer, Response
from needle_lib.testing.structured import AskedFormat, asked_format, check_format
from needle_lib.tokens import count_tokens

Behaviour = Callable[[list[JSONObject]], str]


def _wrong(messages: list[JSONObject]) -> str:
    return "\n".join(f"x{i} = {i}" for i in range(20))


def _mixed(messages: list[JSONObject]) -> str:
    """Perfect, a quarter, or wrong, chosen by the answer's hash: verdicts and scores that
    vary by case but never by request order (concurrent and serial runs must agree)."""
    answer = reference_answer(messages)
    kind = zlib.crc32(answer.encode()) % 3
    if kind == 0:
        return answer
    lines = answer.split("\n")
    return "\n".join(lines[: len(lines) // 4]) if kind == 1 else _wrong(messages)


#: Prompt characters up to which ``fading`` still answers every target, and half of them.
FADING_WHOLE, FADING_HALF = 60_000, 200_000


def _fading(messages: list[JSONObject]) -> str:
    """Recall that fades with context length: perfect on a short prompt (novel_16k), half
    the targets (chosen by the answer's hash, as ``mixed`` does) on a longer one (novel_64k)
    and none beyond (novel_128k): a model whose effective context is shorter than its
    window."""
    size = sum(len(str(m.get("content") or "")) for m in messages)
    answer = reference_answer(messages)
    if size <= FADING_WHOLE or (size <= FADING_HALF and zlib.crc32(answer.encode()) % 2 == 0):
        return answer
    return _wrong(messages)


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
    "mixed": _mixed,
    "fading": _fading,
    "cached": reference_answer,
}


def overflow(prompt: int, context: int) -> Response:
    """llama.cpp's answer when the prompt does not fit the loaded context."""
    return 400, "application/json", json.dumps({"error": {
        "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt,
        "n_ctx": context, "message": f"request ({prompt} tokens) exceeds the available "
        f"context size ({context} tokens), try increasing it"}}).encode()


#: Behaviours whose ``usage.prompt_tokens`` counts only what follows the longest prefix
#: shared with an earlier request, with no cached count beside it; at least one token, as
#: llama.cpp always re-evaluates the last one.
UNCACHED_COUNT = {"cached"}
FAILURES = {
    "http500": (500, "application/json", b'{"error": {"message": "internal error"}}'),
    "html": (200, "text/html", b"<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>"),
    "broken-json": (200, "application/json", b'{"choices": [{"message": {"content": "a'),
}
MODES = (*BEHAVIOURS, *FAILURES, "overflow")
#: Servers whose metadata endpoints the fake can answer (``server=``).
SERVERS = ("llamacpp", "vllm", "lmstudio", "ollama")
#: The model id the fake's listings carry (a single-model server lists one).
LISTED_MODEL = "fake-model"


def _json(data: JSON) -> Response:
    return 200, "application/json", json.dumps(data).encode()


def _bad_request(message: str) -> Response:
    """What an OpenAI-compatible server answers a request it cannot read."""
    return 400, "application/json", json.dumps({"error": {
        "message": message, "type": "invalid_request_error", "code": 400}}).encode()


def _not_found(server: str, method: str, path: str) -> Response:
    """What each server answers for a path it does not serve."""
    if server == "vllm":  # FastAPI
        return 404, "application/json", b'{"detail":"Not Found"}'
    if server == "ollama":  # Go's net/http
        return 404, "text/plain", b"404 page not found"
    if server == "lmstudio":
        # Guessed from what LM Studio is seen to answer (not documented): an error object.
        return 200, "application/json", json.dumps(
            {"error": f"Unexpected endpoint or method. ({method} {path})"}).encode()
    # llama.cpp (and a generic OpenAI-compatible server)
    return 404, "application/json", json.dumps({"error": {
        "code": 404, "message": "File Not Found", "type": "not_found_error"}}).encode()


def metadata(server: str | None, method: str, path: str, body: JSONObject, *,
             context: int | None, maximum: int | None) -> Response | None:
    """``server``'s answer to anything but a chat request, in its documented shape (a
    generic server serves no metadata); None for the chat endpoint."""
    path = path.split("?")[0].rstrip("/")
    if method == "POST" and path.endswith("/chat/completions"):
        return None
    if server is None:
        return _not_found("llamacpp", method, path)
    if server == "llamacpp" and path == "/props":
        # tools/server/README.md: `default_generation_settings` has the /completion
        # `generation_settings` fields, `n_ctx` (the per-slot context) among them.
        return _json({"default_generation_settings": {"n_ctx": context, "n_predict": -1,
                                                      "model": LISTED_MODEL},
                      "total_slots": 1, "model_path": f"/models/{LISTED_MODEL}.gguf",
                      "chat_template": "", "build_info": "b0-fake"})
    if server == "llamacpp" and path in ("/v1/models", "/models"):
        return _json({"object": "list", "data": [{
            "id": LISTED_MODEL, "object": "model", "created": 0, "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": maximum,
                     "n_embd": 2048, "n_params": 1_000_000_000, "size": 1_000_000_000}}]})
    if server == "vllm" and path in ("/v1/models", "/models"):
        return _json({"object": "list", "data": [{
            "id": LISTED_MODEL, "object": "model", "created": 0, "owned_by": "vllm",
            "root": LISTED_MODEL, "parent": None, "max_model_len": context,
            "permission": []}]})
    if server == "lmstudio" and path == "/v1/models":
        return _json({"object": "list", "data": [
            {"id": LISTED_MODEL, "object": "model", "owned_by": "organization_owner"}]})
    if server == "lmstudio" and path == "/api/v0/models":
        entry: JSONObject = {"id": LISTED_MODEL, "object": "model", "type": "llm",
                 "publisher": "fake", "arch": "qwen3", "compatibility_type": "gguf",
                 "quantization": "Q4_K_M", "state": "loaded" if context else "not-loaded",
                 "max_context_length": maximum}
        if context:
            # Not in the documented v0 example: LM Studio builds since 0.3.x add it to a
            # loaded model's entry (a guess at its exact placement: beside the maximum).
            entry["loaded_context_length"] = context
        return _json({"object": "list", "data": [entry]})
    if server == "ollama" and path == "/v1/models":
        return _json({"object": "list", "data": [
            {"id": LISTED_MODEL, "object": "model", "created": 0, "owned_by": "library"}]})
    if server == "ollama" and path == "/api/show":
        name = body.get("model") or body.get("name") or LISTED_MODEL
        parameters = 'stop                           "<|im_end|>"'
        if context:  # a Modelfile `PARAMETER num_ctx`
            parameters = f"num_ctx                        {context}\n{parameters}"
        return _json({"modelfile": f"FROM {name}\n", "parameters": parameters,
                      "template": "{{ .Prompt }}", "details": {
                          "format": "gguf", "family": "qwen3", "parameter_size": "1B",
                          "quantization_level": "Q4_K_M"},
                      "model_info": {"general.architecture": "qwen3",
                                     "qwen3.context_length": maximum},
                      "capabilities": ["completion"]})
    return _not_found(server, method, path)
#: The context the ``overflow`` behaviour has loaded, as llama-server does by default.
OVERFLOW_CONTEXT = 4096


@dataclass
class ServerStats:
    requests: int = 0
    max_tokens_seen: list[int] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)
    #: Requests received and not yet answered (waiting for a slot included), and the most
    #: seen at once: how many requests a client really had in flight.
    in_flight: int = 0
    max_in_flight: int = 0
    #: Metadata requests (``GET /props`` …), apart from the chat requests counted above.
    metadata_paths: list[str] = field(default_factory=list)
    #: The ``response_format`` shape of every chat request (``text`` when it had none).
    response_formats: list[str] = field(default_factory=list)
    #: ``time.monotonic()`` of the first request's arrival and of the last answer.
    first_request_at: float | None = None
    last_answer_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeOpenAIServer(LoopbackServer):
    """``with FakeOpenAIServer("perfect") as server: server.url``.

    ``answer_first=N`` answers the first N requests perfectly before the behaviour starts:
    a server that passes the preflight and then fails.
    """

    def __init__(self, behaviour: str = "perfect", *, latency: float = 0.0,
                 slots: int | None = None, answer_first: int = 0,
                 context: int | None = None, server: str | None = None,
                 maximum: int | None = None, formats: str = "openai") -> None:
        check_format(formats, AskedFormat("text"))  # an unknown name fails here
        self.formats = formats
        if behaviour not in MODES:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        if server is not None and server not in SERVERS:
            raise ValueError(f"unknown server {server!r} (known: {', '.join(SERVERS)})")
        #: Whose metadata endpoints to answer, and the model's own maximum context.
        self.server = server
        self.maximum = maximum
        self.behaviour = behaviour
        self.answer_first = answer_first
        #: A loaded context size: longer prompts get llama.cpp's overflow answer.
        self.context = context
        self.latency = latency
        self.stats = ServerStats()
        self._slots = threading.Semaphore(slots) if slots else None
        self._seen: list[str] = []  # prompts so far, for ``cached``
        super().__init__()

    def _respond(self, body: JSONObject, number: int) -> Response:
        refused = check_format(self.formats, asked_format(body))
        if refused is not None:
            return refused
        behaviour = "perfect" if number <= self.answer_first else self.behaviour
        if behaviour in FAILURES:
            return FAILURES[behaviour]
        listed = body.get("messages", [])
        messages = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
        if not isinstance(listed, list) or len(messages) < len(listed):
            return _bad_request("'messages' must be a list of objects")
        if behaviour == "overflow":
            whole = sum(count_tokens(str(m.get("content") or "")) for m in messages)
            return overflow(whole, OVERFLOW_CONTEXT)
        content = BEHAVIOURS[behaviour](messages)
        if behaviour in UNCACHED_COUNT:
            text = "".join(str(m.get("content") or "") for m in messages)
            prompt = max(1, count_tokens(text[self._cached_prefix(text):]))
        else:
            prompt = sum(count_tokens(str(m.get("content") or "")) for m in messages)
        if self.context is not None and prompt > self.context:
            return overflow(prompt, self.context)
        prompt = min(prompt, TRUNCATING.get(behaviour, prompt))
        answer = count_tokens(content)
        completion: JSONObject = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": answer,
                      "total_tokens": prompt + answer},
        }
        return 200, "application/json", json.dumps(completion).encode()

    def _cached_prefix(self, text: str) -> int:
        """Characters of ``text`` an earlier request already put in the prefix cache."""
        with self.stats.lock:
            best = max((len(os.path.commonprefix([text, seen]))  # noqa: RUF071 (characters)
                        for seen in self._seen),
                       default=0)
            self._seen.append(text)
        return best

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        try:
            request = json_object(loads_untrusted(body or b"{}"))
        except ValueError as exc:
            return _bad_request(f"the body is not JSON: {exc}")
        if request is None:
            return _bad_request("the body must be a JSON object")
        answer = metadata(self.server, method, path, request, context=self.context,
                          maximum=self.maximum)
        if answer is not None:
            with self.stats.lock:
                self.stats.metadata_paths.append(f"{method} {path}")
            return answer
        stats = self.stats
        with stats.lock:
            stats.requests += 1
            number = stats.requests
            limit = request.get("max_tokens") or request.get("max_completion_tokens") or 0
            stats.max_tokens_seen.append(limit if isinstance(limit, int) else 0)
            stats.auth_headers.append(headers.get("Authorization", ""))
            stats.response_formats.append(asked_format(request).shape)
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            if stats.first_request_at is None:
                stats.first_request_at = time.monotonic()
        try:
            if self._slots:
                with self._slots:
                    time.sleep(self.latency)
            elif self.latency:
                time.sleep(self.latency)
            return self._respond(request, number)
        finally:
            with stats.lock:
                stats.in_flight -= 1
                stats.last_answer_at = time.monotonic()


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
