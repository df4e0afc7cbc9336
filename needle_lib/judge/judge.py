"""The async relevance judge: cache first, one request per distinct pair, bounded concurrency.

Engines often return the same page with the same title and snippet; such results are rated
once — by the disk cache across runs and processes, and by in-flight sharing within a process
when identical pairs are requested at the same moment (e.g. several engines judged at once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import httpx

from needle_lib.judge.cache import DEFAULT_CACHE_PATH, JudgeCache, JudgedPair
from needle_lib.judge.config import judge_model_config
from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION, build_messages
from needle_lib.judge.verdict import JudgeError, JudgeItem, Verdict
from needle_lib.llm import AsyncChatClient, LLMError, RetryPolicy, make_async_chat_client

DEFAULT_CONCURRENCY = 8


class RelevanceJudge:
    """Rates search results for a query on the Needs Met scale.

    Counters (for reports): ``requests`` LLM calls made, ``cache_hits`` verdicts served from
    disk, ``shared`` calls that joined an identical in-flight request, ``judged`` calls that
    returned a verdict and ``failures`` calls that raised ``JudgeError`` — so
    ``judged_pairs = judged`` and ``judge_errors = failures``.
    """

    def __init__(
        self,
        client: AsyncChatClient,
        *,
        cache: JudgeCache | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"judge concurrency must be at least 1, got {concurrency}")
        self.client = client
        self.cache = cache
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._inflight: dict[str, asyncio.Task[Verdict]] = {}
        self.requests = 0
        self.cache_hits = 0
        self.shared = 0
        self.judged = 0
        self.failures = 0

    @classmethod
    def create(
        cls,
        model: str | None = None,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        cache_path: Path | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
    ) -> RelevanceJudge:
        """A judge for ``--judge-model`` / ``--judge-concurrency`` with the default disk cache."""
        config = judge_model_config(model)
        client = make_async_chat_client(config, transport=transport, retry=retry)
        cache = JudgeCache(cache_path or DEFAULT_CACHE_PATH)
        return cls(client, cache=cache, concurrency=concurrency)

    def __repr__(self) -> str:
        return f"RelevanceJudge(model={self.model!r}, concurrency={self.concurrency})"

    @property
    def model(self) -> str:
        return self.client.config.name

    def stats(self) -> dict[str, Any]:
        """Counters and model identity, for a run report."""
        return {
            "judge_model": self.model,
            "judge_prompt_version": JUDGE_PROMPT_VERSION,
            "judged_pairs": self.judged,
            "judge_errors": self.failures,
            "judge_requests": self.requests,
            "judge_cache_hits": self.cache_hits,
            "judge_shared": self.shared,
        }

    def _pair(self, query: str, item: JudgeItem) -> JudgedPair:
        return JudgedPair(
            model=self.model,
            prompt_version=JUDGE_PROMPT_VERSION,
            query=query,
            url=item.url,
            title=item.title,
            snippet=item.snippet,
        )

    async def rate(self, query: str, item: JudgeItem) -> Verdict:
        """The verdict for ``item`` under ``query``; raises ``JudgeError`` if it cannot be had."""
        pair = self._pair(query, item)
        try:
            verdict = await self._verdict(pair, query, item)
        except JudgeError:
            self.failures += 1
            raise
        self.judged += 1
        return verdict

    async def rate_many(self, query: str, items: Sequence[JudgeItem]) -> list[Verdict | JudgeError]:
        """One entry per item, in order: its verdict or the ``JudgeError`` (errors as data)."""
        return list(await asyncio.gather(*(self._rate_or_error(query, it) for it in items)))

    async def _rate_or_error(self, query: str, item: JudgeItem) -> Verdict | JudgeError:
        try:
            return await self.rate(query, item)
        except JudgeError as exc:
            return exc

    async def _verdict(self, pair: JudgedPair, query: str, item: JudgeItem) -> Verdict:
        key = pair.key
        task = self._inflight.get(key)
        if task is not None:
            self.shared += 1
        else:
            cached = self.cache.get(pair) if self.cache is not None else None
            if cached is not None:
                self.cache_hits += 1
                return cached
            task = asyncio.create_task(self._judge(pair, query, item))
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._forget(key, done))
        # shield: one caller being cancelled must not cancel the request others wait on.
        return await asyncio.shield(task)

    def _forget(self, key: str, task: asyncio.Task[Verdict]) -> None:
        """Drop a finished request; retrieving its error keeps asyncio quiet when every
        waiter was cancelled before it failed (the failure then concerns nobody)."""
        self._inflight.pop(key, None)
        if not task.cancelled():
            task.exception()

    async def _judge(self, pair: JudgedPair, query: str, item: JudgeItem) -> Verdict:
        async with self._slots:
            self.requests += 1
            try:
                result = await self.client.complete(build_messages(query, item))
            except LLMError as exc:
                raise JudgeError(str(exc), query=query, url=item.url) from exc
        try:
            rating, label, reasoning = parse_verdict(result.content)
        except JudgeError as exc:
            raise JudgeError(exc.detail, query=query, url=item.url) from None
        verdict = Verdict(rating=rating, label=label, reasoning=reasoning)
        if self.cache is not None:
            self.cache.put(pair, verdict)
        return verdict

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
