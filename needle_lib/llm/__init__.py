"""The model layer: model configs, an OpenAI-compatible chat client, the reference oracle."""

from needle_lib.llm.client import AsyncChatClient, ChatClient, RetryPolicy
from needle_lib.llm.config import ModelConfig, load_dotenv_once, resolve_model
from needle_lib.llm.errors import (
    ContextOverflowError,
    LLMBadResponseError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    PromptTruncatedError,
)
from needle_lib.llm.factory import make_async_chat_client, make_chat_client
from needle_lib.llm.protocol import ChatResult
from needle_lib.llm.reference import ReferenceTransport

__all__ = [
    "AsyncChatClient",
    "ChatClient",
    "ChatResult",
    "ContextOverflowError",
    "LLMBadResponseError",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "ModelConfig",
    "PromptTruncatedError",
    "ReferenceTransport",
    "RetryPolicy",
    "load_dotenv_once",
    "make_async_chat_client",
    "make_chat_client",
    "resolve_model",
]
