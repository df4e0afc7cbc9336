"""Requests in flight: a (corpus, model) pair's next answers fetched ahead of its cases.

Recall requests are I/O: a multi-slot server or a hosted API answers several at once, and
one process per slot (``-n``) costs a Python start-up per slot. The cases stay ordinary
pytest cases run one after another; when a case asks for its answer, the dispatcher also
sends the requests of the pair's next cases in this process's run order (``Lookahead``), so
up to ``concurrency`` requests overlap and a kill loses at most that many answers. Requests run on
daemon threads rather than an executor: Ctrl-C must not wait out requests in flight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from needle_lib.kernel.lookahead import Lookahead
from needle_lib.llm import ChatResult, LLMError
from needle_lib.recall.plan import RecallCase
from needle_lib.tomlconf import ConfigError

Send = Callable[[RecallCase], ChatResult]


@dataclass(frozen=True)
class Sent:
    """When a case's request left (its ``requested_at``) and what came back: the answer,
    or the infrastructure error that makes the case an ERROR."""

    requested_at: float
    result: ChatResult | None = None
    error: LLMError | ConfigError | None = None


def send_now(send: Send, case: RecallCase) -> Sent:
    requested_at = time.time()
    try:
        return Sent(requested_at, result=send(case))
    except (LLMError, ConfigError) as exc:
        return Sent(requested_at, error=exc)


def _send_ahead(send: Send, case: RecallCase) -> Future[Sent]:
    future: Future[Sent] = Future()

    def run() -> None:
        try:
            future.set_result(send_now(send, case))
        except BaseException as exc:  # a bug, not a server failure: re-raised in the case
            future.set_exception(exc)

    threading.Thread(target=run, name=f"needle-{case.id}", daemon=True).start()
    return future


class RecallDispatcher:
    """Per process: one pipeline per (corpus, model) pair whose model has concurrency > 1.

    ``upcoming(pair)`` lists the pair's cases this process will run, in order, minus those
    answered by a resumed dump; ``may_send(case)`` is False once fail-fast has tripped.
    """

    def __init__(self, upcoming: Callable[[str], list[RecallCase]],
                 may_send: Callable[[RecallCase], bool]) -> None:
        self._upcoming = upcoming
        self._may_send = may_send
        self._pipelines: dict[str, Lookahead[RecallCase, Sent]] = {}

    def answer(self, case: RecallCase, send: Send) -> Sent:
        limit = case.model.concurrency
        if limit <= 1:  # a single-slot server: one request at a time, prefix cache warm
            return send_now(send, case)
        if case.pair not in self._pipelines:
            self._pipelines[case.pair] = Lookahead(
                self._upcoming(case.pair), limit, lambda ahead: _send_ahead(send, ahead),
                lambda: self._may_send(case))
        return self._pipelines[case.pair].result(case)
