"""What the loopback fakes do with a request's ``response_format``: read which shape it asks
for (``llm.formats``), and accept it or refuse it as one kind of real server does.

- ``openai``: OpenAI's API (and OpenRouter, vLLM, llama.cpp's ``llama-server``): takes
  ``json_schema`` and plain ``json_object``.
- ``llama-cpp-python``: its server's request model allows ``type`` ``text`` or
  ``json_object`` only; anything else gets the validation error wrapped in an HTTP 500
  (as 0.3.36 answers, seen against the real server).
- ``none``: a server without structured output that says so: HTTP 400 naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.testing.loopback import Response

FORMAT_SERVERS = ("openai", "llama-cpp-python", "none")
_ACCEPTED = {"openai": {"json_schema", "json_object"}, "llama-cpp-python": {"json_object"},
             "none": set()}


@dataclass(frozen=True)
class AskedFormat:
    """A request's ``response_format``: its shape (``text`` when absent) and its schema."""

    shape: str
    schema: JSON = None


def asked_format(body: JSONObject) -> AskedFormat:
    """What ``body`` asked for (a malformed field reads as its ``type`` alone)."""
    asked = body.get("response_format")
    if not isinstance(asked, dict):
        return AskedFormat("text")
    shape = str(asked.get("type", "text"))
    named = asked.get("json_schema")
    schema = named.get("schema") if isinstance(named, dict) else asked.get("schema")
    return AskedFormat(shape, schema)


def check_format(server: str, asked: AskedFormat) -> Response | None:
    """``server``'s refusal of ``asked``, or None when it takes it."""
    if server not in _ACCEPTED:
        raise ValueError(f"unknown format server {server!r} (known: {', '.join(FORMAT_SERVERS)})")
    if asked.shape == "text" or asked.shape in _ACCEPTED[server]:
        return None
    if server == "llama-cpp-python":
        message = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                   "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                   f"'json_object'\", 'input': '{asked.shape}'}}")
        return 500, "application/json", json.dumps({"error": {
            "message": message, "type": "internal_server_error", "param": None,
            "code": None}}).encode()
    return 400, "application/json", json.dumps({"error": {
        "message": "response_format is not supported by this server",
        "type": "invalid_request_error", "param": "response_format"}}).encode()


def constrained(asked: AskedFormat) -> bool:
    """Whether an accepted ``asked`` binds the reply to a schema (grammar-constrained)."""
    return asked.shape != "text" and asked.schema is not None
