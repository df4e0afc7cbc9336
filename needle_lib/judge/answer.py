"""The answer judge: the LLM backstop of known-item benches (``pytest evals -k finance --judge``).

Deterministic matchers miss answers stated in forms no rule foresaw ("$18.8bn", a CEO's
nickname, an answer carried only by the URL). With ``--judge`` the results ranked above the
first deterministic hit are shown to a model that answers yes or no: does this result state
the gold answer? It can find an earlier hit, never revoke one, so the judge can only raise
recall, and every upgrade is counted in the report (``judge_upgrades``).

Verdicts live in the relevance judge's SQLite cache under their own prompt version, so a
rerun asks nothing twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import httpx

from needle_lib.judge.cache import DEFAULT_CACHE_PATH, JudgeCache, JudgedPair
from needle_lib.judge.config import judge_model_config
from needle_lib.judge.judge import judge_reply
from needle_lib.judge.tally import note_request
from needle_lib.judge.verdict import JudgeError, JudgeItem, Verdict
from needle_lib.llm import AsyncChatClient, RetryPolicy, make_async_chat_client
from needle_lib.net.slots import CallSlots

ANSWER_PROMPT_VERSION = "needle-answer-1"
DEFAULT_CONCURRENCY = 8

_SYSTEM = (
    "You verify search results for a benchmark. Given a question, the answer we expect, "
    "and one search result (title, URL, snippet), decide whether the result itself states "
    "that answer. Equivalent forms count: rounding, other units or scales, abbreviations, "
    "nicknames, or the answer appearing in the URL. A result that is merely about the right "
    "company or topic does not count, and a result stating a clearly different value means "
    "no. Reply with exactly one word: yes or no."
)
_REPAIR = "Your previous reply could not be read. Reply with exactly one word: yes or no."


def answer_messages(query: str, expected: str, item: JudgeItem) -> list[dict[str, str]]:
    user = (
        f"Question: {query}\n"
        f"Expected answer: {expected}\n\n"
        f"Result title: {item.title}\n"
        f"Result URL: {item.url}\n"
        f"Result snippet: {item.snippet}"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def parse_yes_no(text: str) -> bool | None:
    """True for an answer starting with "yes", False for "no", None when it is neither."""
    words = text.strip().split()
    first = words[0].strip(".!\"'`*:,").lower() if words else ""
    if first.startswith("yes"):
        return True
    if first.startswith("no"):
        return False
    return None


class AnswerJudge:
    """Yes/no verdicts with a disk cache and bounded concurrency; errors come back as data."""

    def __init__(self, client: AsyncChatClient, *, cache: JudgeCache | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY, slots: CallSlots | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"judge concurrency must be at least 1, got {concurrency}")
        self.client = client
        self.cache = cache
        #: the bound on calls in flight; shared with the relevance judge when given
        self._slots = slots or CallSlots(concurrency)
        self.requests = 0

    @classmethod
    def create(cls, model: str | None = None, *, concurrency: int = DEFAULT_CONCURRENCY,
               cache_path: Path | None = None,
               transport: httpx.AsyncBaseTransport | None = None,
               retry: RetryPolicy | None = None,
               slots: CallSlots | None = None) -> AnswerJudge:
        config = judge_model_config(model)
        client = make_async_chat_client(config, transport=transport, retry=retry,
                                        connections=concurrency)
        return cls(client, cache=JudgeCache(cache_path or DEFAULT_CACHE_PATH),
                   concurrency=concurrency, slots=slots)

    @property
    def model(self) -> str:
        return self.client.config.name

    def _pair(self, query: str, expected: str, item: JudgeItem) -> JudgedPair:
        return JudgedPair(self.model, ANSWER_PROMPT_VERSION, f"{query}\n[expected] {expected}",
                          item.url, item.title, item.snippet)

    async def states_answer(self, query: str, expected: str, item: JudgeItem) -> bool:
        """Whether ``item`` states ``expected``; ``JudgeError`` when no verdict can be had."""
        pair = self._pair(query, expected, item)
        cached = self.cache.get(pair) if self.cache is not None else None
        if cached is not None:
            return cached.rating == 1
        messages = answer_messages(query, expected, item)
        async with self._slots.hold():
            verdict = None
            for _ in range(2):  # one repair round for an unreadable reply
                self.requests += 1
                note_request()
                reply = await judge_reply(self.client, messages, query=query, url=item.url)
                verdict = parse_yes_no(reply)
                if verdict is not None:
                    break
                messages = [*messages, {"role": "assistant", "content": reply},
                            {"role": "user", "content": _REPAIR}]
            if verdict is None:
                raise JudgeError(f"answer is neither yes nor no: {reply[:80]!r}",
                                 query=query, url=item.url)
        if self.cache is not None:
            self.cache.put(pair, Verdict(rating=int(verdict), label="yes" if verdict else "no",
                                         reasoning=""))
        return verdict

    async def decide_many(self, query: str, expected: str,
                          items: Sequence[JudgeItem]) -> list[bool | JudgeError]:
        """One entry per item, in order: its verdict or the ``JudgeError``."""
        async def one(item: JudgeItem) -> bool | JudgeError:
            try:
                return await self.states_answer(query, expected, item)
            except JudgeError as exc:
                return exc

        return list(await asyncio.gather(*(one(item) for item in items)))

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.cache is not None:
            self.cache.close()
