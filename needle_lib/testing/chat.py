"""The chat-completions shape every loopback fake with an LLM endpoint speaks: reading the
prompt a client sent, and building the answer it expects. Once, so the fakes agree with each
other and with what ``llm.protocol`` parses."""

from __future__ import annotations

from needle_lib.jsonio import JSON, JSONObject


def message_texts(body: JSON) -> list[str]:
    """Each message's ``content`` as text ("" where a message has none or is not an
    object): the request is the client's, so nothing about its shape is assumed."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return []
    return [str(m.get("content") or "") if isinstance(m, dict) else "" for m in messages]


def completion(content: str, *, model: JSON = "fake", finish_reason: str = "stop",
               usage: JSONObject | None = None, **fields: JSON) -> JSONObject:
    """A ``chat.completion`` object answering ``content`` (``fields``: ``id``, ``created``
    and any other top-level field a fake sets)."""
    answer: JSONObject = {"id": "chatcmpl-fake", "object": "chat.completion", **fields,
                          "model": model,
                          "choices": [{"index": 0, "finish_reason": finish_reason,
                                       "message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        answer["usage"] = usage
    return answer
