"""Ask for structured output in the shape the server accepts, learnt from its own answers.

Why: a small local model rarely writes the exact JSON a parser wants when asked only in
words (SmolLM2-135M as relevance judge: 30 of 30 replies unreadable), yet the same model
under grammar-constrained decoding answers in the schema every time. So judges ask for
their schema in OpenAI's shape first; a server that refuses it (an HTTP 400, 422 or 500
naming ``response_format``) is asked in the next shape (``llm.formats.SHAPES``), down to plain
text, where the caller's parser reads the reply as it always did. The step down is kept,
so a run pays for each refusal once per client. A server that accepts the field and
ignores it answers in text, which the same parser reads.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from needle_lib.llm.client import AsyncChatClient
from needle_lib.llm.errors import LLMHTTPError
from needle_lib.llm.formats import SHAPES, JsonSchema, Shape, refuses_format, response_format
from needle_lib.llm.protocol import ChatResult, Messages


class Answered(NamedTuple):
    """One completion and the shape it was asked in (the shape may step down between
    concurrent calls, so each answer says its own)."""

    result: ChatResult
    shape: Shape


class StructuredOutput:
    """The shape one client's server accepts (``shape``) and the refusals that taught it
    (``refusals``: one line each)."""

    def __init__(self, first: Shape = SHAPES[0]) -> None:
        self.shape: Shape = first
        self.refusals: list[str] = []
        self._lock = threading.Lock()  # a judge's calls run concurrently

    async def complete(self, client: AsyncChatClient, messages: Messages,
                       schema: JsonSchema) -> Answered:
        """One completion asking for ``schema``; a refusal of the shape steps down and
        asks again (at most once per shape), any other error propagates."""
        while True:
            shape = self.shape
            try:
                result = await client.complete(messages,
                                               response_format=response_format(shape, schema))
            except LLMHTTPError as exc:
                if shape == "text" or not refuses_format(exc):
                    raise
                self._step_down(shape, f"{shape}: HTTP {exc.status}: {exc.excerpt}")
                continue
            return Answered(result, shape)

    def _step_down(self, refused: Shape, why: str) -> None:
        """Move past ``refused``, unless a concurrent call has already done so."""
        with self._lock:
            if self.shape == refused:
                self.shape = SHAPES[SHAPES.index(refused) + 1]
                self.refusals.append(why[:300])
