"""How a chat request asks for JSON that follows a schema, and how a server says it won't.

Servers spell structured output two ways, and each refuses the spelling it does not know:

- ``json_schema``: OpenAI's documented shape, ``{"type": "json_schema", "json_schema":
  {"name": …, "schema": …}}``; OpenAI, OpenRouter, vLLM, llama.cpp's ``llama-server`` and
  Ollama's ``/v1`` endpoint take it (each constrains decoding to the schema).
- ``json_object``: ``{"type": "json_object", "schema": …}``, the older JSON-mode shape with
  the schema beside it; llama-cpp-python's server takes only this one and turns the schema
  into a grammar (0.3.36 answers a ``json_schema`` request with HTTP 500 carrying its
  validation error, ``'loc': ('body', 'response_format', 'type')``).

``text`` asks for nothing: the prompt's own instructions and the caller's parser. No
``strict`` flag is sent: OpenAI's strict mode refuses keywords such as ``maxLength``, which
keeps a small local model's free-text field from running on to ``max_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from needle_lib.llm.errors import ContextOverflowError, LLMError, LLMHTTPError

Shape = Literal["json_schema", "json_object", "text"]
#: The shapes in the order they are tried: the documented one first, plain text last.
SHAPES: tuple[Shape, ...] = ("json_schema", "json_object", "text")
#: Statuses a server answers an unsupported request field with: 400 and 422 (FastAPI's
#: validation error), and 500 from llama-cpp-python, whose error handler wraps the
#: validation error. A 500 is retried first, like any 500: a run pays that once.
REFUSAL_STATUSES = (400, 422, 500)
#: Words a refusal of the field names (pydantic's 422 lists ``response_format``; vLLM,
#: OpenAI and llama.cpp name the field or the schema).
_REFUSAL_WORDS = ("response_format", "json_schema", "json schema")


class NamedSchema(TypedDict):
    """``response_format.json_schema`` in OpenAI's shape."""

    name: str
    schema: dict[str, object]


class ResponseFormat(TypedDict):
    """The ``response_format`` field of a chat request, in either shape."""

    type: Literal["json_schema", "json_object"]
    json_schema: NotRequired[NamedSchema]
    schema: NotRequired[dict[str, object]]


@dataclass(frozen=True)
class JsonSchema:
    """A JSON Schema a reply must follow, and its name (OpenAI wants ``[A-Za-z0-9_-]+``)."""

    name: str
    schema: dict[str, object]


def response_format(shape: Shape, schema: JsonSchema) -> ResponseFormat | None:
    """The ``response_format`` asking for ``schema`` in ``shape``; None for ``text``."""
    if shape == "json_schema":
        return ResponseFormat(type="json_schema",
                              json_schema=NamedSchema(name=schema.name, schema=schema.schema))
    if shape == "json_object":
        return ResponseFormat(type="json_object", schema=schema.schema)
    return None


def refuses_format(error: LLMError) -> bool:
    """Whether ``error`` is a server refusing the ``response_format`` it was sent (and not,
    say, a prompt too long for its context, which no other shape would fix)."""
    if not isinstance(error, LLMHTTPError) or isinstance(error, ContextOverflowError):
        return False
    text = error.excerpt.lower()
    return error.status in REFUSAL_STATUSES and any(word in text for word in _REFUSAL_WORDS)
