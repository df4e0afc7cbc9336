"""Errors raised by the chat client.

Every message names the model and the endpoint URL, because a benchmark run talks to several
servers and "connection refused" alone does not say which one is down. No message ever
carries the API key: errors are built from the URL, the status and a scrubbed body excerpt,
never from request headers.
"""

from __future__ import annotations

from needle_lib.errors import NeedleError
from needle_lib.net.retry import RETRYABLE_STATUSES


class LLMError(NeedleError):
    """Base class: a chat request to ``model`` at ``url`` failed."""

    #: Whether sending the same request again may succeed (connection trouble, 429, 5xx).
    retryable: bool = False

    def __init__(self, detail: str, *, model: str, url: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.model = model
        self.url = url
        self.attempts = 1

    def __str__(self) -> str:
        tail = f" (gave up after {self.attempts} attempts)" if self.attempts > 1 else ""
        return f"model {self.model!r} at {self.url}: {self.detail}{tail}"


class LLMConnectionError(LLMError):
    """The server could not be reached or did not answer within the timeout."""

    retryable = True


class LLMHTTPError(LLMError):
    """The server answered with an error status (or an error object inside a 200)."""

    def __init__(
        self,
        status: int,
        excerpt: str,
        *,
        model: str,
        url: str,
        retry_after: float | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(detail or f"HTTP {status}: {excerpt}", model=model, url=url)
        self.status = status
        self.excerpt = excerpt
        self.retry_after = retry_after
        # Rate limits and server-side failures are transient; other 4xx mean the request
        # itself is wrong and repeating it only wastes time (and money on hosted APIs).
        self.retryable = status in RETRYABLE_STATUSES


class ContextOverflowError(LLMHTTPError):
    """The prompt does not fit the context window the server was started/loaded with."""

    def __init__(
        self,
        status: int,
        excerpt: str,
        *,
        model: str,
        url: str,
        detail: str,
        server_limit: int | None,
        server_prompt_tokens: int | None,
        estimated_prompt_tokens: int | None,
    ) -> None:
        super().__init__(status, excerpt, model=model, url=url, detail=detail)
        self.server_limit = server_limit
        self.server_prompt_tokens = server_prompt_tokens
        self.estimated_prompt_tokens = estimated_prompt_tokens
        self.retryable = False


class PromptTruncatedError(LLMError):
    """The server answered, but reports far fewer prompt tokens than were sent: it cut the
    prompt to fit its context, so the answer says nothing about the model."""

    def __init__(
        self, detail: str, *, model: str, url: str, served_prompt_tokens: int,
        estimated_prompt_tokens: int,
    ) -> None:
        super().__init__(detail, model=model, url=url)
        self.served_prompt_tokens = served_prompt_tokens
        self.estimated_prompt_tokens = estimated_prompt_tokens


class LLMBadResponseError(LLMError):
    """The server answered 2xx but not with a usable chat completion."""
