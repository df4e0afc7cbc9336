"""The async relevance judge: cache first, one request per distinct pair, bounded concurrency.

Engines often return the same page with the same title and snippet; such results are rated
once — by the disk cache across runs and processes, and by in-flight sharing within a process
when identical pairs are requested at the same moment (e.g. several engines judged at once).

Every judgement of a query gets the same context: today's date (the query's own date for a
generated cohort, so freshness is judged as of when the query was current), the query's
profile (made once per query, cached like verdicts) and the evidence cut to the uniform
``snippet_chars`` budget with a note saying how much was left out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from typing import TypedDict

from needle_lib.clock import utc_today
from needle_lib.judge.base import DEFAULT_CONCURRENCY, LLMJudge
from needle_lib.judge.cache import JudgeCache, JudgedPair, ProfiledQuery
from needle_lib.judge.parse import kept_reply, parse_verdict
from needle_lib.judge.profile import (
    PROFILE_PROMPT_VERSION,
    QueryProfile,
    build_profile_messages,
    parse_profile,
)
from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION, build_messages, evidence
from needle_lib.judge.schemas import PROFILE_SCHEMA, VERDICT_SCHEMA
from needle_lib.judge.verdict import JudgeError, JudgeItem, Verdict
from needle_lib.llm import AsyncChatClient
from needle_lib.llm.protocol import Messages
from needle_lib.net.slots import GATING, CallSlots, call_priority
from needle_lib.search.bounds import MAX_DATE_CHARS

__all__ = ["DEFAULT_CONCURRENCY", "RelevanceJudge"]


class JudgeStats(TypedDict):
    """A relevance judge's counters and identity, for a run report."""

    judge_model: str
    judge_prompt_version: str
    judged_pairs: int
    judge_errors: int
    judge_requests: int
    judge_cache_hits: int
    judge_shared: int
    profile_requests: int
    profile_cache_hits: int
    profile_errors: int


class RelevanceJudge(LLMJudge):
    """Rates search results for a query on the Needs Met scale.

    Counters (for reports): ``requests`` LLM calls made (profiles included), ``cache_hits``
    verdicts served from disk, ``shared`` calls that joined an identical in-flight request,
    ``judged`` calls that returned a verdict and ``failures`` calls that raised
    ``JudgeError`` — so ``judged_pairs = judged`` and ``judge_errors = failures``; and for
    query profiles ``profile_requests``, ``profile_cache_hits`` and ``profile_errors`` (a
    query whose profile failed is judged without one).
    """

    def __init__(
        self,
        client: AsyncChatClient,
        *,
        cache: JudgeCache | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        today: Callable[[], date] = utc_today,
        slots: CallSlots | None = None,
    ) -> None:
        super().__init__(client, cache=cache, concurrency=concurrency, slots=slots)
        self._today = today
        self._inflight: dict[str, asyncio.Task[Verdict]] = {}
        #: profiles being made, then made: a made one is kept as its value, not as the task
        #: that made it (a task holds its context and coroutine: kilobytes a query)
        self._profiling: dict[str, asyncio.Task[QueryProfile | None]] = {}
        self._profiles: dict[str, QueryProfile | None] = {}
        self.cache_hits = 0
        self.shared = 0
        self.judged = 0
        self.failures = 0
        self.profile_requests = 0
        self.profile_cache_hits = 0
        self.profile_errors = 0

    def today(self) -> date:
        """The date freshness is judged against when a query brings none of its own."""
        return self._today()

    def stats(self) -> JudgeStats:
        """Counters and model identity, for a run report."""
        return {
            "judge_model": self.model,
            "judge_prompt_version": JUDGE_PROMPT_VERSION,
            "judged_pairs": self.judged,
            "judge_errors": self.failures,
            "judge_requests": self.requests,
            "judge_cache_hits": self.cache_hits,
            "judge_shared": self.shared,
            "profile_requests": self.profile_requests,
            "profile_cache_hits": self.profile_cache_hits,
            "profile_errors": self.profile_errors,
        }

    # --- the query profile -------------------------------------------------------------

    async def profile(self, query: str) -> QueryProfile | None:
        """The profile of ``query`` (made once per process, stored on disk), or None if the
        model could not give a usable one."""
        if query in self._profiles:
            return self._profiles[query]
        task = self._profiling.get(query)
        if task is None:
            task = asyncio.create_task(self._load_profile(query))
            self._profiling[query] = task
            task.add_done_callback(lambda done: self._profile_made(query, done))
        return await asyncio.shield(task)

    def _profile_made(self, query: str, task: asyncio.Task[QueryProfile | None]) -> None:
        del self._profiling[query]
        if not task.cancelled() and task.exception() is None:
            self._profiles[query] = task.result()

    async def _load_profile(self, query: str) -> QueryProfile | None:
        key = ProfiledQuery(self.model, PROFILE_PROMPT_VERSION, query)
        stored = self.cache.get_profile(key) if self.cache is not None else None
        if stored is not None:
            self.profile_cache_hits += 1
            return QueryProfile.from_json(stored)
        self.profile_requests += 1
        # every verdict of the query (on every engine) waits for this call: served in run
        # order after the next case's verdicts, it left the judge without work each time
        # the cases started ahead ran out (this task's own context; the caller's is untouched)
        call_priority.set(call_priority.get() - GATING)
        try:
            answer = await self._ask(build_profile_messages(query), schema=PROFILE_SCHEMA,
                                     query=query, url=None)
            profile = parse_profile(answer.text, query)
        except JudgeError:
            self.profile_errors += 1
            return None
        if self.cache is None:
            return profile
        return QueryProfile.from_json(self.cache.adopt_profile(key, profile.to_json()))

    # --- verdicts --------------------------------------------------------------------------

    async def rate(
        self, query: str, item: JudgeItem, *, today: date | None = None, snippet_chars: int = 0
    ) -> Verdict:
        """The verdict for ``item`` under ``query``; raises ``JudgeError`` if it cannot be had.

        ``today`` is the date freshness is judged against (default: the judge's clock, UTC);
        ``snippet_chars`` caps the evidence shown (0 = only the ``MAX_EVIDENCE_CHARS`` guard).
        """
        today = today or self._today()
        profile = await self.profile(query)
        shown = evidence(item, snippet_chars)  # every field bounded, as the judge sees it
        pair = JudgedPair(
            model=self.model,
            prompt_version=JUDGE_PROMPT_VERSION,
            query=query,
            url=shown["url"],
            title=shown["title"],
            snippet=shown["snippet"],
            published_date=item.published_date[:MAX_DATE_CHARS] if item.published_date else None,
            today=today.isoformat(),
            profile=profile.to_json() if profile else "",
        )
        messages = build_messages(query, item, today=today, profile=profile,
                                  snippet_chars=snippet_chars)
        try:
            verdict = await self._verdict(pair, messages)
        except JudgeError:
            self.failures += 1
            raise
        self.judged += 1
        return verdict

    async def rate_many(
        self,
        query: str,
        items: Sequence[JudgeItem],
        *,
        today: date | None = None,
        snippet_chars: int = 0,
    ) -> list[Verdict | JudgeError]:
        """One entry per item, in order: its verdict or the ``JudgeError`` (errors as data)."""
        return list(await asyncio.gather(
            *(self._rate_or_error(query, it, today, snippet_chars) for it in items)
        ))

    async def _rate_or_error(self, query: str, item: JudgeItem, today: date | None,
                             snippet_chars: int) -> Verdict | JudgeError:
        try:
            return await self.rate(query, item, today=today, snippet_chars=snippet_chars)
        except JudgeError as exc:
            return exc

    async def _verdict(self, pair: JudgedPair, messages: Messages) -> Verdict:
        key = pair.key
        task = self._inflight.get(key)
        if task is not None:
            self.shared += 1
        else:
            cached = self.cache.get(pair) if self.cache is not None else None
            if cached is not None:
                self.cache_hits += 1
                return cached
            task = asyncio.create_task(self._judge(pair, messages))
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

    async def _judge(self, pair: JudgedPair, messages: Messages) -> Verdict:
        answer = await self._ask(messages, schema=VERDICT_SCHEMA, query=pair.query,
                                 url=pair.url)
        try:
            verdict = replace(parse_verdict(answer.text), served_by=answer.served_by)
        except JudgeError as exc:
            raise JudgeError(exc.detail, query=pair.query, url=pair.url,
                             reply=kept_reply(answer.text), served_by=answer.served_by) from None
        if self.cache is not None:
            self.cache.put(pair, verdict)
        return verdict
