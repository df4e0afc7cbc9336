"""The recall dump contract: one JSON file per (corpus, model), and its summary.

Quality percentages are computed over *valid* cases only (passed or failed): an errored or
skipped case says nothing about the model, and scoring it as zero would rank a flaky
server as a bad model. A run with any error is marked ``valid: false`` instead.
"""

from __future__ import annotations

from statistics import fmean, median
from typing import Any

from needle_lib.llm.protocol import ChatResult
from needle_lib.llm.truncation import served_prompt_tokens
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.score import SCORER_VERSION, Score

SCHEMA_VERSION = 2

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"

#: Header fields two dumps must share for their cases to be interchangeable (resume).
PROVENANCE_FIELDS = ("prompt_version", "scorer_version", "corpus.sha256", "model.request",
                     "sampling", "scoring")
#: Request-shape keys that change how fast answers arrive, never what they say: two dumps
#: that differ only here hold interchangeable cases.
THROUGHPUT_REQUEST_KEYS = ("concurrency",)


#: Every case carries every contract key; fields that do not apply (an errored case has no
#: score) are null rather than missing.
EMPTY_CASE: dict[str, Any] = dict.fromkeys((
    "function", "case_id", "file", "start_line", "signature", "outcome", "matched", "scored",
    "ratio", "passed", "hallucinated", "reindented", "bonus", "missing", "composition",
    "response", "reasoning", "finish_reason", "latency_s", "usage", "timings", "attempts",
    "error", "skip_reason", "prompt_tokens_est",
))


def answer_fields(result: ChatResult) -> dict[str, Any]:
    return {
        "response": result.content,
        "reasoning": result.reasoning,
        "finish_reason": result.finish_reason,
        "usage": result.usage,
        "timings": result.timings,
        "latency_s": round(result.latency_s, 4),
        "served_model": result.model,
        "attempts": result.attempts,
        "answer_truncated_by_needle": result.truncated_by_needle,
    }


def stored_result(case: dict[str, Any]) -> ChatResult:
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
        truncated_by_needle=bool(case.get("answer_truncated_by_needle")),
    )


def score_fields(score: Score) -> dict[str, Any]:
    data = score.to_json()
    return {key: data[key] for key in (
        "matched", "scored", "ratio", "passed", "hallucinated", "reindented", "bonus",
        "missing", "composition",
    )}


def new_dump(header: dict[str, Any]) -> dict[str, Any]:
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


def provenance_value(dump: dict[str, Any], dotted: str) -> Any:
    value: Any = dump
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _comparable(dump: dict[str, Any], field: str) -> Any:
    value = provenance_value(dump, field)
    if field == "model.request" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in THROUGHPUT_REQUEST_KEYS}
    return value


def provenance_differences(old: dict[str, Any], new: dict[str, Any],
                           labels: tuple[str, str] = ("dump", "this run")) -> list[str]:
    """Human-readable list of provenance fields on which two dumps differ."""
    diffs = []
    for field in PROVENANCE_FIELDS:
        a, b = _comparable(old, field), _comparable(new, field)
        if a != b:
            diffs.append(f"{field}: {a!r} ({labels[0]}) vs {b!r} ({labels[1]})")
    return diffs


def summarize(cases: list[dict[str, Any]], expected: int) -> dict[str, Any]:
    outcomes = [c["outcome"] for c in cases]
    valid = [c for c in cases if c["outcome"] in (PASSED, FAILED)]
    matched = sum(c["matched"] for c in valid)
    scored = sum(c["scored"] for c in valid)
    latencies = [c["latency_s"] for c in valid if c.get("latency_s") is not None]
    served = [n for c in cases if (n := served_prompt_tokens(c.get("usage"))) is not None]
    estimated = [c["prompt_tokens_est"] for c in cases if c.get("prompt_tokens_est")]

    def part(name: str, key: str) -> int:
        return sum(c["composition"][name][key] for c in valid)

    return {
        "cases": len(cases),
        "expected": expected,
        "not_run": max(0, expected - len(cases)),
        PASSED: outcomes.count(PASSED),
        FAILED: outcomes.count(FAILED),
        "errors": outcomes.count(ERROR),
        SKIPPED: outcomes.count(SKIPPED),
        "matched": matched,
        "scored": scored,
        "matched_pct": round(100 * matched / scored, 2) if scored else None,
        "pass_rate": round(100 * outcomes.count(PASSED) / len(valid), 2) if valid else None,
        "hallucinated": sum(c["hallucinated"] for c in valid),
        "reindented": sum(c["reindented"] for c in valid),
        "bonus": sum(c["bonus"] for c in valid),
        "code": {"matched": part("code", "matched"), "total": part("code", "total")},
        "prose": {"matched": part("prose", "matched"), "total": part("prose", "total")},
        "blank_skipped": sum(c["composition"]["blank_skipped"] for c in valid),
        "latency_s": {
            "mean": round(fmean(latencies), 4) if latencies else None,
            "p50": round(median(latencies), 4) if latencies else None,
        },
        # Median prompt size: as the server counted it (usage.prompt_tokens, the model's own
        # tokenizer) and as estimated under the reference tokenizer.
        "prompt_tokens": {
            "served": int(median(served)) if served else None,
            "estimate": int(median(estimated)) if estimated else None,
        },
    }


def finalize(dump: dict[str, Any], *, in_progress: bool) -> dict[str, Any]:
    """Recompute the derived fields of ``dump`` from its cases."""
    cases = dump["cases"]
    expected = dump.get("expected_cases", len(cases))
    summary = summarize(cases, expected)
    dump["summary"] = summary
    dump["in_progress"] = in_progress
    dump["valid"] = summary["errors"] == 0
    # Complete means every case was attempted; errors are reported by ``valid`` instead.
    dump["complete"] = not in_progress and summary["not_run"] == 0 and summary[SKIPPED] == 0
    return dump
