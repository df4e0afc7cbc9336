"""ANSI renderings: a case's line diff and the per-run summary table.

Colours follow the seed tool's video: matched gray, missing orange, hallucinated yellow,
bonus cyan, ineligible dim; re-indented lines are labelled as such, because they are
neither missing content nor invented content. Every line also carries a text marker, so
the diff reads the same without colour (logs, CI).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from needle_lib.contract.records import Composition, RecallCaseRecord, RecallDump, RecallSummary
from needle_lib.recall.effective_length import RULE, describe, effective_lengths
from needle_lib.recall.results import run_status

RESET = "\x1b[0m"
STYLES = {
    "matched": ("  ", "\x1b[90m"),
    "missing": ("- ", "\x1b[38;5;208m"),
    "hallucinated": ("+ ", "\x1b[33m"),
    "reindented": ("~ ", "\x1b[35m"),
    "bonus": ("» ", "\x1b[36m"),
    "ineligible": ("· ", "\x1b[2m"),
}
#: What each line status means, in legend order (the terminal's and the HTML report's).
MEANINGS = {"matched": "matched", "missing": "missing", "hallucinated": "hallucinated",
            "reindented": "reindented", "bonus": "bonus", "ineligible": "not scored"}
LEGEND = "legend: " + " · ".join(f"'{STYLES[s][0]}' {m}" for s, m in MEANINGS.items())


def paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color and style else text


def render_diff(diff: Iterable[Sequence[str]], *, color: bool) -> str:
    out = []
    for status, text, *_ in diff:
        marker, style = STYLES[status]
        label = "   (reindented)" if status == "reindented" else ""
        out.append(paint(f"{marker}{text}{label}", style, color))
    return "\n".join(out)


def case_headline(case: RecallCaseRecord) -> str:
    verdict = "PASS" if case.get("passed") else "FAIL"
    ratio = case["ratio"]
    pct = f"{100 * ratio:.0f}%" if case.get("scored") and ratio is not None else "n/a"
    return (
        f"=== {case['function']}  [{verdict}]  matched={case['matched']}/{case['scored']} ({pct})"
        f"  hallucinated={case['hallucinated']}  reindented={case['reindented']}"
        f"  bonus={case['bonus']} ==="
    )


def composition_line(composition: Composition | None) -> str:
    if composition is None:
        return "composition: none (the case was not scored)"
    code, prose = composition["code"], composition["prose"]
    return (
        f"composition: code {code['matched']}/{code['total']} · prose "
        f"{prose['matched']}/{prose['total']} · {composition['blank_skipped']} blank skipped"
    )


def explain_case(case: RecallCaseRecord, diff: Iterable[Sequence[str]], *, color: bool) -> str:
    """The failure message of a recall case: headline, composition, coloured diff."""
    return "\n".join(
        [
            case_headline(case),
            "  " + composition_line(case["composition"]),
            "  " + LEGEND,
            render_diff(diff, color=color),
        ]
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"


def prompt_size(summary: RecallSummary) -> str:
    """The run's median prompt in tokens: as the server counted it, else ``≈`` the estimate
    under the reference tokenizer (before any answer, or from a server without usage)."""
    sizes = summary.get("prompt_tokens")
    if sizes and (served := sizes.get("served")):
        return f"{served / 1000:.1f}K"
    if sizes and (estimate := sizes.get("estimate")):
        return f"≈{estimate / 1000:.1f}K"
    return "—"


def summary_table(dumps: Sequence[RecallDump], *, color: bool) -> str:
    """One row per (corpus, model) dump; ``tokens`` is the median prompt (see prompt_size).
    The name columns widen to the longest name, so a long ``repo_…`` corpus or model id
    never pushes the numbers out from under their headings."""
    corpus_w = max([14, *(len(d["corpus"]["name"]) for d in dumps)])
    model_w = max([22, *(len(d["model"]["key"]) for d in dumps)])
    header = (
        f"{'corpus':<{corpus_w}} {'model':<{model_w}} {'tokens':>7} {'cases':>5} {'pass':>5} "
        f"{'fail':>5} {'err':>4} "
        f"{'skip':>5} {'matched':>9} {'pass rate':>9} {'halluc':>6} {'reind':>6} {'bonus':>6}"
        f"  status"
    )
    rows = [header, "-" * len(header)]
    for dump in dumps:
        s = dump["summary"]
        status = run_status(dump)
        if status != "ok":
            status = paint(status, "\x1b[31m" if not dump["valid"] else "\x1b[33m", color)
        rows.append(
            f"{dump['corpus']['name']:<{corpus_w}} {dump['model']['key']:<{model_w}} "
            f"{prompt_size(s):>7} {s['cases']:>5} "
            f"{s['passed']:>5} {s['failed']:>5} {s['errors']:>4} {s['skipped']:>5} "
            f"{_pct(s['matched_pct']):>9} {_pct(s['pass_rate']):>9} {s['hallucinated']:>6} "
            f"{s['reindented']:>6} {s['bonus']:>6}  {status}"
        )
    return "\n".join(rows)


def effective_length_section(dumps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The effective-length lines of the models whose run covered two or more sizes of a
    novel family (empty when none did), under a heading that states the rule."""
    results = effective_lengths(dumps)
    if not results:
        return []
    return [f"effective context length ({RULE}):",
            *(line for result in results for line in describe(result))]
