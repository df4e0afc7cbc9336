"""Positional recall as a ``kernel.benchmark.Benchmark``: ask a model for a function's
first body lines with the corpus in context, score the answer line by line.

Asking goes through two guards shared across xdist workers (``kernel.runstate``): a
preflight, one cheap request per (corpus, model) with the real prompt shape, so a corpus
that does not fit is said once instead of waited out once per case (the case that sent it
errors with the message, the pair's other cases skip naming it, and neither counts toward
the model's fail-fast, so the model's other pairs still run); and, with a model's
``concurrency`` above 1, the dispatcher (``recall.dispatch``), which has sent the request
ahead, so the case still receives its own answer or error, in run order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from needle_lib.contract.outcome import NOTHING_TO_SCORE, Outcome, scored_outcome
from needle_lib.contract.records import (
    RecallCaseRecord,
    RecallDump,
    RecallHeader,
    RecallRecord,
    ShardRecord,
    recall_case_record,
)
from needle_lib.kernel.benchmark import CaseVerdict
from needle_lib.kernel.runstate import RunState
from needle_lib.llm import ChatResult
from needle_lib.recall.dispatch import RecallDispatcher, Sent
from needle_lib.recall.journal import fold
from needle_lib.recall.plan import RecallCase, RecallClients, RecallPlan, ask, preflight
from needle_lib.recall.results import (
    answer_fields,
    fill_case,
    score_fields,
    stored_answer_fields,
    stored_result,
)
from needle_lib.report.terminal import explain_case
from needle_lib.tomlconf import ConfigError


@dataclass(frozen=True)
class RecallAnswer:
    """The model's answer (``sent``), or why there is none: ``error`` (the model's client
    could not be made, or this case's preflight failed) or ``skip`` (another case's
    preflight of the pair failed)."""

    sent: Sent | None = None
    error: str | None = None
    skip: str | None = None
    #: the failure is the model's (its client), so fail-fast counts it
    model_failed: bool = False


def model_subject(case: RecallCase) -> str:
    """Who answers a recall case, for fail-fast: its model."""
    return f"model {case.model.key}"


class RecallBenchmark:
    """Recall's cases, asked through one process's clients and dispatcher."""

    def __init__(self, plan: RecallPlan, clients: RecallClients, dispatcher: RecallDispatcher,
                 state: RunState, *, shard_of: Callable[[str], ShardRecord | None],
                 color: bool) -> None:
        self.plan = plan
        self.clients = clients
        self.dispatcher = dispatcher
        self.state = state
        #: the shard a pair's run is a part of (``--shard``), which its header records
        self.shard_of = shard_of
        #: whether a failure's line diff is coloured
        self.color = color

    def cases(self) -> list[RecallCase]:
        return self.plan.cases

    def subject(self, case: RecallCase) -> str:
        return model_subject(case)

    def record(self, case: RecallCase) -> RecallRecord:
        header = self.plan.header(case).copy()  # the plan's is shared by the pair's cases
        if (shard := self.shard_of(case.pair)) is not None:
            header["shard"] = shard
        return RecallRecord(kind="recall", pair=case.pair, header=header,
                            case=recall_case_record(**case.case_fields()),
                            messages=self.plan.messages_for(case))

    def resume(self, case: RecallCase, record: RecallRecord,
               kept: RecallCaseRecord) -> CaseVerdict:
        """The stored answer, scored again: the stored fields are what was scored."""
        fields = stored_answer_fields(kept)
        fill_case(record["case"], fields)
        record["case"]["resumed"] = True
        return self._judge(case, record, stored_result(fields), answered=None)

    def ask(self, case: RecallCase) -> RecallAnswer:
        try:
            client = self.clients.get(case.model)  # resolves the API key
        except ConfigError as exc:
            return RecallAnswer(error=f"model {case.model.key}: {exc}", model_failed=True)
        ran_here: list[bool] = []

        def run() -> str | None:
            ran_here.append(True)
            return preflight(client, case)

        failed = self.state.preflight(case.pair, run)
        if failed is not None:
            if ran_here:
                return RecallAnswer(error=failed)
            return RecallAnswer(skip=f"preflight of {case.pair} failed: {failed}")
        sent = self.dispatcher.answer(case, lambda ahead: ask(client, ahead))
        if sent.error is not None:
            return RecallAnswer(sent, error=str(sent.error), model_failed=True)
        return RecallAnswer(sent)

    def score(self, case: RecallCase, answer: RecallAnswer, record: RecallRecord) -> CaseVerdict:
        stored = record["case"]
        if answer.skip is not None:
            stored["skip_reason"] = answer.skip
            return CaseVerdict(Outcome.SKIPPED, answer.skip)
        if answer.sent is not None:
            stored["requested_at"] = round(answer.sent.requested_at, 3)
        if answer.error is not None:
            stored["error"] = answer.error
            return CaseVerdict(Outcome.ERROR, answer.error,
                               answered=False if answer.model_failed else None)
        assert answer.sent is not None and answer.sent.result is not None
        fields = answer_fields(answer.sent.result)  # capped: what is stored is what is scored
        fill_case(stored, fields)
        return self._judge(case, record, stored_result(fields), answered=True)

    def _judge(self, case: RecallCase, record: RecallRecord, answer: ChatResult, *,
               answered: bool | None) -> CaseVerdict:
        score = case.score(answer.content)
        fill_case(record["case"], score_fields(score))
        diff = [line.to_json() for line in score.diff]
        record["diff"] = diff
        outcome = scored_outcome(score.scored, score.passed)
        if outcome is Outcome.SKIPPED:
            record["case"]["skip_reason"] = NOTHING_TO_SCORE
            return CaseVerdict(outcome, NOTHING_TO_SCORE, answered)
        if outcome is Outcome.FAILED:
            return CaseVerdict(outcome, explain_case(record["case"], diff, color=self.color),
                               answered)
        return CaseVerdict(outcome, answered=answered)

    def fold(self, header: RecallHeader, records: Iterable[RecallCaseRecord], *,
             in_progress: bool) -> RecallDump:
        return fold(header, records, in_progress=in_progress)
