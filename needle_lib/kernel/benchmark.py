"""What a benchmark is to the runner, written once for recall and the search benches.

A run of any benchmark is the same pipeline: its **cases**, each **asked** (a model, an
engine), the answer **scored** into a case record, the record **journaled**
(``kernel.journal``: a line per case, so a kill loses only the case in flight), and the
journal **folded** into the run's result (a recall dump, a search report) at the end, when
interrupted, and whenever a reader meets a run that did not finish. ``Benchmark`` is that
contract for one benchmark; ``RunWriter`` is the journal-and-fold half the controller
drives, one per benchmark family, so the controller files every case the same way.

Under pytest, a case is an item: asking happens in the fixtures (look-ahead lanes, the
judge), scoring in the test function, so a failure is reported where it happened; the
controller then hands each settled record to the family's ``RunWriter``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import CaseRecord

CaseT = TypeVar("CaseT")
AnswerT = TypeVar("AnswerT")
RecordT = TypeVar("RecordT")
ResultT = TypeVar("ResultT", covariant=True)


class Benchmark(Protocol[CaseT, AnswerT, RecordT, ResultT]):
    """One benchmark: cases → ask → score → record → fold."""

    def cases(self) -> Sequence[CaseT]:
        """The cases of this run, in run order."""
        ...

    def header(self, case: CaseT) -> Mapping[str, object]:
        """The setup the journal's header records for ``case``'s run (what ``--resume``
        compares before reusing a case)."""
        ...

    def ask(self, case: CaseT) -> AnswerT:
        """The answer to ``case`` (a failure to answer raises: it is an error, not a
        verdict)."""
        ...

    def score(self, case: CaseT, answer: AnswerT) -> RecordT:
        """The case record of ``answer``: what the journal keeps of the case."""
        ...

    def fold(self, header: Mapping[str, object], records: Iterable[RecordT], *,
             in_progress: bool) -> ResultT:
        """The run's result from its header and its records in journal order (a later
        record of the same case wins)."""
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
