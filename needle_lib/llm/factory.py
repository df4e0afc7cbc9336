"""Build the right client for a model config: network transport or the in-process oracle."""

from __future__ import annotations

from typing import Any

import httpx

from needle_lib.llm.client import AsyncChatClient, ChatClient
from needle_lib.llm.config import ModelConfig
from needle_lib.llm.reference import AnswerFn, ReferenceTransport


def _reference_transport(config: ModelConfig, answer: AnswerFn | None) -> ReferenceTransport:
    if answer is None:
        raise ValueError(
            f"model {config.key!r} is the built-in reference oracle and needs an answer "
            "function (make_chat_client(config, answer=...)); only benchmarks that know the "
            "expected answer can serve it"
        )
    return ReferenceTransport(answer)


def make_chat_client(
    config: ModelConfig,
    *,
    answer: AnswerFn | None = None,
    transport: httpx.BaseTransport | None = None,
    **kwargs: Any,
) -> ChatClient:
    """A ChatClient for ``config``; ``kwargs`` (retry, sleep) pass through to it."""
    if config.is_reference:
        transport = _reference_transport(config, answer)
    return ChatClient(config, transport=transport, **kwargs)


def make_async_chat_client(
    config: ModelConfig,
    *,
    answer: AnswerFn | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    **kwargs: Any,
) -> AsyncChatClient:
    """Async twin of ``make_chat_client``."""
    if config.is_reference:
        transport = _reference_transport(config, answer)
    return AsyncChatClient(config, transport=transport, **kwargs)
