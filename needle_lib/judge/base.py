"""What every LLM judge shares: one chat client, the disk cache, the run-wide call bound.

The relevance judge (Needs Met ratings) and the answer judge (yes/no backstop of known-item
benches) differ in prompts, schemas and parsing only; building the client, bounding calls in
flight, counting requests, asking for structured output in the shape the server accepts
(``llm.structured``), noting which model the server says answered, and turning a failed or
cut-off reply into a ``JudgeError`` live here once.

A case's judge identity (``JudgeSeen``) is read off the answers it used (``seen_in``), never
off the judge: the judge is shared by every case of the process, so what it learnt last
depends on which case happened to ask first, and a case served from the cache asked nothing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self, TypedDict

import httpx

from needle_lib.judge.cache import DEFAULT_CACHE_PATH, JudgeCache
from needle_lib.judge.config import MAX_TOKENS_ENV, judge_model_config
from needle_lib.judge.tally import note_request
from needle_lib.judge.verdict import JudgeError, ServedBy, Verdict
from needle_lib.llm import AsyncChatClient, LLMError, RetryPolicy, make_async_chat_client
from needle_lib.llm.formats import JsonSchema
from needle_lib.llm.protocol import Messages
from needle_lib.llm.structured import Answered, StructuredOutput
from needle_lib.net.slots import CallSlots

DEFAULT_CONCURRENCY = 8


class JudgeSeen(TypedDict):
    """What a case's judge answers showed of the judge (case-record fields; a report's
    header gathers them: ``judge.identity``)."""

    #: the model id the server put in its answers (None: none known, e.g. no answer came,
    #: or every verdict came from cache entries older than this field)
    judge_served_model: str | None
    #: how output was asked for: ``json_schema``, ``json_object`` or ``text``
    judge_output: str | None


def unseen() -> JudgeSeen:
    """A case whose judge made no call."""
    return JudgeSeen(judge_served_model=None, judge_output=None)


def seen_in(answers: Iterable[Verdict | JudgeError]) -> JudgeSeen:
    """The judge identity of a case that used ``answers`` (fresh or cached verdicts, and
    errors that came with a reply): each field from the newest answer that knows it.

    Why the newest: a case may mix verdicts cached by an earlier run with fresh ones, and
    an alias or router may have put another model behind the judge's name in between. The
    newest answer names what the server serves now; and since which of a case's verdicts
    are fresh depends on what ran before it (another case may just have cached them), any
    rule that preferred fresh over cached, or counted them, would again depend on case
    order: a verdict cached earlier in this run is exactly as new as the fresh answer it
    was. Older models a case used are not recorded (one field per case)."""
    served = [answer.served_by for answer in answers if answer.served_by is not None]

    def newest(field: Callable[[ServedBy], str | None]) -> str | None:
        known = [(by.at, value) for by in served if (value := field(by)) is not None]
        return max(known)[1] if known else None

    return JudgeSeen(judge_served_model=newest(lambda by: by.model),
                     judge_output=newest(lambda by: by.output))


@dataclass(frozen=True)
class Reply:
    """The text of one judge call and who answered it."""

    text: str
    served_by: ServedBy


#: One chat call of a judge: plain, or asking for structured output.
Asker = Callable[[AsyncChatClient, Messages], Awaitable[Answered]]


class LLMJudge:
    """A judge model behind a bounded, cached client; ``requests`` counts the calls made."""

    def __init__(self, client: AsyncChatClient, *, cache: JudgeCache | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY, slots: CallSlots | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"judge concurrency must be at least 1, got {concurrency}")
        self.client = client
        self.cache = cache
        self.concurrency = concurrency
        #: the bound on calls in flight; shared with other judges (and processes) when given
        self._slots = slots or CallSlots(concurrency)
        self.requests = 0
        #: the structured-output shape this judge's server accepts, learnt from its answers
        self.structured = StructuredOutput()

    @classmethod
    def create(cls, model: str | None = None, *, concurrency: int = DEFAULT_CONCURRENCY,
               cache_path: Path | None = None,
               transport: httpx.AsyncBaseTransport | None = None,
               retry: RetryPolicy | None = None, slots: CallSlots | None = None) -> Self:
        """A judge for ``--judge-model`` / ``--judge-concurrency`` with the default disk cache."""
        client = make_async_chat_client(judge_model_config(model), transport=transport,
                                        retry=retry, connections=concurrency)
        return cls(client, cache=JudgeCache(cache_path or DEFAULT_CACHE_PATH),
                   concurrency=concurrency, slots=slots)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, concurrency={self.concurrency})"

    @property
    def model(self) -> str:
        return self.client.config.name

    async def _ask(self, messages: Messages, *, schema: JsonSchema, query: str,
                   url: str | None) -> Reply:
        """One LLM call under the concurrency bound, asking for ``schema``; a failed or
        cut-off answer is an error."""
        async with self._slots.hold():
            self.requests += 1
            note_request()
            return await judge_reply(self.client, messages, query=query, url=url,
                                     ask=self._structured_call(schema))

    def _structured_call(self, schema: JsonSchema) -> Asker:
        async def ask(client: AsyncChatClient, messages: Messages) -> Answered:
            return await self.structured.complete(client, messages, schema)
        return ask

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _plain(client: AsyncChatClient, messages: Messages) -> Answered:
    return Answered(await client.complete(messages), "text")


async def judge_reply(client: AsyncChatClient, messages: Messages, *, query: str,
                      url: str | None, ask: Asker = _plain) -> Reply:
    """The reply to one judge call (made by ``ask``: plain, or asking for a schema); a failed
    request or an answer cut off by the token budget (a reasoning model that never reached
    its verdict) is a ``JudgeError``, never a zero."""
    try:
        result, shape = await ask(client, messages)
    except LLMError as exc:
        raise JudgeError(str(exc), query=query, url=url) from exc
    served_by = ServedBy(result.model, shape, time.time())
    if result.finish_reason == "length":
        budget = client.config.max_tokens
        raise JudgeError(
            f"answer truncated: the model used its whole max_tokens budget ({budget}) "
            f"before finishing (finish_reason 'length'); raise {MAX_TOKENS_ENV} or the "
            "judge model config's max_tokens",
            query=query, url=url, served_by=served_by,
        )
    if result.truncated_by_needle:
        raise JudgeError(
            f"answer larger than the judge's max_answer_bytes "
            f"({client.config.max_answer_bytes} bytes): not judged", query=query, url=url,
            served_by=served_by)
    return Reply(result.content, served_by)
