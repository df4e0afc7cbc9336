"""The recall dump contract: one JSON file per (corpus, model), and its summary.

Quality percentages are computed over *valid* cases only (passed or failed): an errored or
skipped case says nothing about the model, and scoring it as zero would rank a flaky
server as a bad model. A run with any error is marked ``valid: false`` instead.

An answer is kept up to ``STORED_ANSWER_CHARS`` characters (the answer and the reasoning
each), and the kept text is also the text scored, so the live run, ``--resume`` and
``needle rescore`` reach the same verdict from the same characters. A recall answer is a
few KB (twenty lines); the cap is 30 times that. Without it an 8 MB answer (the chat
client's own limit, ``max_answer_bytes``) was stored in the run file, the latest view and
the HTML report: 24 MB from one case. A cut is flagged in the case (``answer_cut``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import fmean, median
from typing import Any, Literal, TypeVar, cast

from needle_lib.contract.outcome import Outcome, is_policy_skip, is_scored
from needle_lib.contract.records import (
    AnswerFields,
    Composition,
    RecallCaseRecord,
    RecallDump,
    RecallHeader,
    RecallSummary,
    ScoreFields,
)
from needle_lib.llm.protocol import ChatResult
from needle_lib.llm.truncation import PromptCount, served_prompt_tokens
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.score import SCORER_VERSION, Score

SCHEMA_VERSION = 2

#: Characters kept of a recall answer, and of its reasoning: the head, scored and stored.
STORED_ANSWER_CHARS = 65_536

PASSED, SKIPPED = Outcome.PASSED, Outcome.SKIPPED


def summary_key(outcome: Outcome) -> str:
    """The dump summary's count of ``outcome``: its value, but ``errors`` for ERROR (as
    every dump has spelled it). Plain strings: a summary reads the same from memory (a
    journal folded on read, then validated) as from its file."""
    return "errors" if outcome is Outcome.ERROR else outcome.value


#: A run's status in every rendering (terminal, HTML report, dashboards, gates): an invalid
#: run (an infrastructure error) is never ranked or gated; an incomplete one is flagged.
INVALID_STATUS = "✗ INVALID"
INCOMPLETE_STATUS = "⚠ INCOMPLETE"


def run_status(dump: RecallDump) -> str:
    """``ok``, or the flags of a run that is invalid (with its error count) or incomplete."""
    flags = []
    if not dump["valid"]:
        flags.append(f"{INVALID_STATUS} ({dump['summary']['errors']} error(s))")
    if not dump["complete"]:
        flags.append(INCOMPLETE_STATUS)
    return " ".join(flags) or "ok"


def _kept(text: str | None) -> str | None:
    return text[:STORED_ANSWER_CHARS] if text is not None else None


def answer_fields(result: ChatResult) -> AnswerFields:
    """The case fields of an answer, each text cut to ``STORED_ANSWER_CHARS``; a cut adds
    ``answer_cut``: the length in characters of each field that was cut."""
    cut = {name: len(text) for name, text in (("response", result.content),
                                              ("reasoning", result.reasoning))
           if text is not None and len(text) > STORED_ANSWER_CHARS}
    fields: AnswerFields = {
        "response": _kept(result.content),
        "reasoning": _kept(result.reasoning),
        "finish_reason": result.finish_reason,
        "usage": result.usage,
        "timings": result.timings,
        "latency_s": round(result.latency_s, 4),
        "served_model": result.model,
        "attempts": result.attempts,
        "prompt_count": result.prompt_count,
        "answer_truncated_by_needle": result.truncated_by_needle,
    }
    if cut:
        fields["answer_cut"] = cut
    return fields


def stored_result(case: AnswerFields | RecallCaseRecord | dict[str, Any]) -> ChatResult:
    """The answer a dump recorded for ``case``, to re-score without asking again."""
    return ChatResult(
        content=case["response"] or "",
        reasoning=case.get("reasoning"),
        finish_reason=case.get("finish_reason"),
        usage=case.get("usage"),
        timings=case.get("timings"),
        latency_s=case.get("latency_s") or 0.0,
        model=case.get("served_model"),
        attempts=case.get("attempts") or 0,
        prompt_count=case.get("prompt_count"),
        truncated_by_needle=bool(case.get("answer_truncated_by_needle")),
    )


def stored_answer_fields(case: RecallCaseRecord) -> AnswerFields:
    """The answer fields of a stored case as ``answer_fields`` wrote them, its cut flag
    included (the stored text is within the cap already)."""
    fields = answer_fields(stored_result(case))
    if cut := case.get("answer_cut"):
        fields["answer_cut"] = cut
    return fields


def fill_case(case: RecallCaseRecord, fields: AnswerFields | ScoreFields) -> None:
    """Copy an answer's or a score's fields into the case's record, in place (the record
    travels with the case from its start). Sound though mypy cannot see it: each key of
    either is a key of the record with a narrower type (a TypedDict's ``update`` takes only
    its own type, since a mutable key's type is invariant)."""
    case.update(cast(RecallCaseRecord, fields))


def score_fields(score: Score) -> ScoreFields:
    return {"matched": score.matched, "scored": score.scored, "ratio": round(score.ratio, 6),
            "passed": score.passed, "hallucinated": score.hallucinated,
            "reindented": score.reindented, "bonus": score.bonus, "missing": score.missing,
            "composition": score.composition}


def new_dump(header: RecallHeader | dict[str, Any]) -> dict[str, Any]:
    """A dump of no case yet: the state, ``header`` (a run's setup), then the cases and the
    summary, in the order every dump has had; ``finalize`` fills in the summary.

    A plain dict in and out: ``recall.merge`` builds a dump from a part's header as read
    (``kernel.merge`` holds parts untyped) and ``plugin.resume`` compares setups on one;
    ``recall.journal.fold`` is the typed way in."""
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "recall",
        "prompt_version": PROMPT_VERSION,
        "scorer_version": SCORER_VERSION,
        "in_progress": True,
        "complete": False,
        "valid": True,
        **header,
        "cases": [],
        "summary": {},
    }


def _scored(case: RecallCaseRecord) -> tuple[RecallCaseRecord, Composition] | None:
    """``case`` and its composition when it is a quality result (a scored case carries its
    score: the schema checks that of every dump read)."""
    if not is_scored(case["outcome"]) or (composition := case.get("composition")) is None:
        return None
    return case, composition


def summarize(cases: Sequence[RecallCaseRecord], expected: int) -> RecallSummary:
    """A dump's summary of its ``cases``."""
    outcomes = Counter(c["outcome"] for c in cases)
    valid = [found for c in cases if (found := _scored(c)) is not None]
    matched = sum(c["matched"] or 0 for c, _ in valid)
    scored = sum(c["scored"] or 0 for c, _ in valid)
    latencies = [latency for c, _ in valid if (latency := c.get("latency_s")) is not None]
    served = [n for c in cases if c.get("prompt_count") != PromptCount.CACHE_HIT
              and (n := served_prompt_tokens(c.get("usage"), c.get("timings"))) is not None]
    estimated = [tokens for c in cases if (tokens := c.get("prompt_tokens_est"))]

    def part(name: Literal["code", "prose"], key: Literal["matched", "total"]) -> int:
        return sum(composition[name][key] for _, composition in valid)

    # The outcome counts are keyed by ``summary_key`` (tests/test_recall_records.py checks
    # the two agree), in the contract's order.
    return {
        "cases": len(cases),
        "expected": expected,
        "not_run": max(0, expected - len(cases)),
        "passed": outcomes[Outcome.PASSED],
        "failed": outcomes[Outcome.FAILED],
        "errors": outcomes[Outcome.ERROR],
        "skipped": outcomes[Outcome.SKIPPED],
        # Skips that are verdicts: answered, with nothing to score under the policy.
        "unscored": sum(is_policy_skip(c) for c in cases),
        "matched": matched,
        "scored": scored,
        "matched_pct": round(100 * matched / scored, 2) if scored else None,
        "pass_rate": round(100 * outcomes[PASSED] / len(valid), 2) if valid else None,
        "hallucinated": sum(c["hallucinated"] or 0 for c, _ in valid),
        "reindented": sum(c["reindented"] or 0 for c, _ in valid),
        "bonus": sum(c["bonus"] or 0 for c, _ in valid),
        "code": {"matched": part("code", "matched"), "total": part("code", "total")},
        "prose": {"matched": part("prose", "matched"), "total": part("prose", "total")},
        "blank_skipped": sum(composition["blank_skipped"] for _, composition in valid),
        "latency_s": {
            "mean": round(fmean(latencies), 4) if latencies else None,
            "p50": round(median(latencies), 4) if latencies else None,
        },
        # Median prompt size: as the server counted it (usage.prompt_tokens, the model's own
        # tokenizer; cache-hit counts cover only the tail, so they are left out) and as
        # estimated under the reference tokenizer.
        "prompt_tokens": {
            "served": int(median(served)) if served else None,
            "estimate": int(median(estimated)) if estimated else None,
        },
    }


#: A dump as ``finalize`` is handed it: a ``RecallDump``, or the same as a plain dict
#: (``recall.merge`` and ``recall.rescore`` hold one, see ``new_dump``).
DumpT = TypeVar("DumpT", RecallDump, dict[str, Any])


def finalize(dump: DumpT, *, in_progress: bool) -> DumpT:
    """Recompute the derived fields of ``dump`` from its cases."""
    cases = dump["cases"]
    expected = dump.get("expected_cases", len(cases))
    summary = summarize(cases, expected)
    dump["summary"] = summary
    dump["in_progress"] = in_progress
    dump["valid"] = summary["errors"] == 0
    # Complete means every case was asked and answered (a policy skip was); errors are
    # reported by ``valid`` instead.
    not_answered = summary["skipped"] - summary["unscored"]
    dump["complete"] = not in_progress and summary["not_run"] == 0 and not_answered == 0
    return dump
