"""Which judge gave a run's verdicts, as its report's header says.

Users compare judge versions, so a report names the judge three ways: the model as Needle
asked for it (``model``), the ids the server answered with (``served_models``: an alias
or a router may put another model behind the name), and the prompt versions the verdicts
were asked under. ``outputs`` says how replies were asked for (``json_schema`` or
``json_object``: structured output in that shape; ``text``: the prompt's words alone),
since a small judge's error rate depends on it. The header is written before the first
judge call; the server's answers ride on each case (``JudgeSeen``) and are gathered into
the header when the report is assembled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NotRequired, TypedDict


class JudgeSetup(TypedDict):
    """A search header's ``judge`` block (``contract.schema.JudgeSetup`` validates it)."""

    model: str
    prompt_version: str
    concurrency: int
    #: judged benches: the query profile's prompt version (profiles steer every verdict)
    profile_prompt_version: NotRequired[str]
    #: gathered from the cases when the report is assembled (absent in a journal header)
    served_models: NotRequired[list[str]]
    outputs: NotRequired[list[str]]


def judge_setup(model: str, kind: str, concurrency: int) -> JudgeSetup:
    """The ``judge`` block of a ``kind`` bench's header before any call is made."""
    # imported here: the report readers use ``with_judge_seen`` on every run, recall's too,
    # and the judges' modules bring the engines and asyncio with them
    from needle_lib.judge.answer import ANSWER_PROMPT_VERSION
    from needle_lib.judge.profile import PROFILE_PROMPT_VERSION
    from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION

    if kind == "judged":
        return JudgeSetup(model=model, prompt_version=JUDGE_PROMPT_VERSION,
                          profile_prompt_version=PROFILE_PROMPT_VERSION,
                          concurrency=concurrency)
    return JudgeSetup(model=model, prompt_version=ANSWER_PROMPT_VERSION,
                      concurrency=concurrency)


class SeenJudges:
    """The served model ids and output shapes a run's cases saw, gathered case by case."""

    def __init__(self) -> None:
        self.served: set[str] = set()
        self.outputs: set[str] = set()

    def add(self, case: Mapping[str, Any]) -> None:
        if isinstance(model := case.get("judge_served_model"), str):
            self.served.add(model)
        if isinstance(output := case.get("judge_output"), str):
            self.outputs.add(output)

    # TODO(merge): the search run header has no declared type yet
    def stamp(self, header: Mapping[str, Any]) -> dict[str, Any]:
        """``header`` with its ``judge`` block naming what was seen (sorted); a header
        without a judge is returned as it is."""
        judge = header.get("judge")
        if not isinstance(judge, dict):
            return dict(header)
        return {**header, "judge": {**judge, "served_models": sorted(self.served),
                                    "outputs": sorted(self.outputs)}}


def with_judge_seen(header: Mapping[str, Any],
                    cases: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``header`` with its ``judge`` block naming what ``cases`` saw (``SeenJudges``)."""
    seen = SeenJudges()
    for case in cases:
        seen.add(case)
    return seen.stamp(header)
