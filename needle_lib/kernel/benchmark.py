"""What a benchmark is to the runner, written once for recall and the search benches.

A run of any benchmark is the same pipeline: its **cases**, each **asked** (a model, an
engine), the answer **scored** into the case's record and a verdict, the record
**journaled** (``kernel.journal``: a line per case, so a kill loses only the case in
flight), and the journal **folded** into the run's result (a recall dump, a search report)
at the end, when interrupted, and whenever a reader meets a run that did not finish.

``Benchmark`` is that contract for one benchmark, pytest-free: recall
(``recall.benchmark``) and the judged and known-item search benches
(``benches.benchmark``) implement it, and the plugin drives every one of them the same way
(``plugin.fixtures.settle``): open the record, take a resumed answer or check fail-fast
and ask, score, then raise what the verdict says in the pytest phase it belongs to (a
failure to answer in setup, so it is an ERROR; a quality miss in the test body, so it is a
FAILED). ``RunWriter`` is the journal-and-fold half the controller drives, one per
benchmark family, so the controller files every case the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord

CaseT = TypeVar("CaseT")
AnswerT = TypeVar("AnswerT")
RecordT = TypeVar("RecordT", bound=CaseRecord)
KeptT = TypeVar("KeptT", contravariant=True)
HeaderT = TypeVar("HeaderT", contravariant=True)
ResultT = TypeVar("ResultT", covariant=True)


@dataclass(frozen=True)
class CaseVerdict:
    """How a case ends, as its benchmark decides it from the answer.

    ``answered`` is what the case says of its subject (the model, the engine) for
    fail-fast: True, the subject answered (its count of consecutive errors restarts);
    False, it failed (the error counts); None, it was not asked or the failure is not the
    subject's (a missing key, a failed preflight, a resumed answer)."""

    outcome: Outcome
    #: why: the failure message with the evidence, the skip or error reason; "" for a pass
    message: str = ""
    answered: bool | None = None


class Benchmark(Protocol[CaseT, AnswerT, RecordT, KeptT, HeaderT, ResultT]):
    """One benchmark: cases → ask → score → record → fold."""

    def cases(self) -> Sequence[CaseT]:
        """The cases of this run, in run order (under pytest, the plan parametrizes them)."""
        ...

    def subject(self, case: CaseT) -> str:
        """Who answers ``case`` (``model qwen``, ``engine exa``): fail-fast counts its
        consecutive errors."""
        ...

    def record(self, case: CaseT) -> RecordT:
        """``case``'s record before it is asked: its run's setup (the journal header) and
        its identity. It travels with the case from the first moment, so a case that
        crashes still files what is known of it."""
        ...

    def resume(self, case: CaseT, record: RecordT, kept: KeptT) -> CaseVerdict:
        """The verdict of the answer the run ``--resume`` continues stored for ``case``
        (``kept``), which ``record`` takes over: nothing is asked again."""
        ...

    def ask(self, case: CaseT) -> AnswerT:
        """The answer to ``case``, or the infrastructure failure that kept it from one
        (never raised: ``score`` turns it into an ERROR or a SKIP)."""
        ...

    def score(self, case: CaseT, answer: AnswerT, record: RecordT) -> CaseVerdict:
        """Fill ``record`` with ``answer`` and its score, and say how the case ends."""
        ...

    def fold(self, header: HeaderT, records: Iterable[KeptT], *,
             in_progress: bool) -> ResultT:
        """The run's result from its header and its case records in journal order."""
        ...


class RunWriter(Protocol[ResultT]):
    """The journals and results of one benchmark family in a run (one writer: the
    controller)."""

    def add(self, record: CaseRecord, outcome: Outcome) -> None:
        """Journal a settled case (its run's journal is opened at its first case)."""
        ...

    def finish(self, *, interrupted: bool) -> Sequence[ResultT]:
        """Fold every journal into its result, written; the journals then go."""
        ...

    def abandon(self) -> None:
        """Stop writing (a full disk): journals are closed as they stand and no result is
        written, so each run reads back as a killed one, for ``--resume``."""
        ...
