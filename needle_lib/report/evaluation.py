"""The evaluation summary at the top of a run's HTML report: per (corpus, model) pair and
per search bench, how it did, which cases failed or errored and why, and what the marks
in the rest of the report mean.

The first screen of a report should answer "who was evaluated, on what, how did they do,
what went wrong" without scrolling through test rows. The figures are the terminal's
(``report.terminal``, ``report.search_summary``), so the two never disagree; the failed
cases are noted by the controller as they settle (``SettledCases``), a bounded number each,
so a 20,000-case run keeps no more in memory than a 20-case one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import BenchCaseRecord, RecallCaseRecord, RecallDump, RecallSummary
from needle_lib.contract.report import SearchReport
from needle_lib.contract.schema import engine_modes_of
from needle_lib.recall.results import run_status, summary_key
from needle_lib.report.search_summary import engine_label, engine_summary
from needle_lib.report.terminal import MEANINGS, STYLES, effective_length_section, prompt_size
from needle_lib.templates import render

#: Failed or errored cases listed per pair on the first screen; the rest are counted.
SHOWN_PROBLEMS = 10
#: Distinct skip reasons listed per pair (each with its count).
SHOWN_SKIP_REASONS = 5

#: The diff's line colours (the HTML twin of the terminal's ``STYLES``).
COLORS = {
    "matched": "color:#777",
    "missing": "color:#e07000;font-weight:bold",
    "hallucinated": "color:#b58900;background:#fff8dc",
    "reindented": "color:#a020a0",
    "bonus": "color:#008b8b",
    "ineligible": "color:#bbb",
}


@dataclass(frozen=True)
class LineKind:
    """One entry of the diff legend: the marker a line starts with and what it means."""

    status: str
    marker: str
    meaning: str
    style: str


@dataclass(frozen=True)
class RatingKind:
    """One step of the judge's scale, as the report's score cells and detail pages show it."""

    rating: int
    label: str
    meaning: str


#: What the diff markers mean, in the terminal's legend order.
DIFF_LEGEND = tuple(LineKind(status, STYLES[status][0], meaning, COLORS[status])
                    for status, meaning in MEANINGS.items())


def rating_legend() -> tuple[tuple[RatingKind, ...], int]:
    """What a search rating means (``3 HM`` in a score cell), and the rating a judged case
    needs to pass. Imported when asked: the judge is the search half, which a recall run
    never loads (``tests/test_plugin_loading.py``)."""
    from needle_lib.judge.verdict import LABELS, MEANINGS, RELEVANT_RATING

    return (tuple(RatingKind(rating, label, MEANINGS[label]) for rating, label in LABELS.items()),
            RELEVANT_RATING)


@dataclass(frozen=True)
class Problem:
    """A case that failed or errored, and why."""

    test_id: str
    outcome: str
    why: str
    #: Where its detail is (a search case's section of the detail page), relative.
    link: str | None = None


@dataclass
class PairCases:
    """What the first screen needs of one pair's settled cases."""

    outcomes: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    skip_reasons: Counter[str] = field(default_factory=Counter)

    @property
    def more_problems(self) -> int:
        return self.outcomes[Outcome.FAILED.value] + self.outcomes[Outcome.ERROR.value] \
            - len(self.problems)


class SettledCases:
    """Outcome counts, the first failed or errored cases and the skip reasons, per pair,
    noted by the controller as each case settles."""

    def __init__(self) -> None:
        self.pairs: dict[str, PairCases] = {}

    def note(self, pair: str, test_id: str, outcome: Outcome, why: str | None,
             link: str | None = None) -> None:
        cases = self.pairs.setdefault(pair, PairCases())
        cases.outcomes[outcome.value] += 1
        if outcome == Outcome.SKIPPED:
            cases.skip_reasons[why or "no reason given"] += 1
        elif outcome in (Outcome.FAILED, Outcome.ERROR) and len(cases.problems) < SHOWN_PROBLEMS:
            cases.problems.append(Problem(test_id, outcome.value, why or "", link))

    def of(self, pair: str) -> PairCases:
        return self.pairs.get(pair, PairCases())


def recall_why(case: RecallCaseRecord, outcome: Outcome) -> str | None:
    """Why a recall case came out as it did, in one line."""
    if outcome == Outcome.SKIPPED:
        return case.get("skip_reason")
    ratio = case.get("ratio")
    if outcome == Outcome.ERROR or not case.get("scored") or ratio is None:
        return case.get("error") or case.get("teardown_error")
    return (f"matched {case['matched']}/{case['scored']} lines "
            f"({100 * ratio:.0f}%) · hallucinated {case['hallucinated']} · "
            f"reindented {case['reindented']}")


def search_why(case: BenchCaseRecord, outcome: Outcome) -> str | None:
    """Why a search case came out as it did, in one line."""
    if outcome == Outcome.SKIPPED:
        return case.get("skip_reason")
    if outcome == Outcome.ERROR:
        return case.get("error") or case.get("search_error") or case.get("teardown_error")
    return case.get("verdict")


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    """One pair (recall) or one bench (search) on the first screen."""

    name: str
    #: what was evaluated on what, in a few words
    subject: str
    outcomes: dict[str, int]
    figures: tuple[tuple[str, str], ...]
    status: str
    ok: bool
    problems: tuple[Problem, ...]
    more_problems: int
    skip_reasons: tuple[tuple[str, int], ...]


#: (outcome, how a count of it reads: "3 errors"), in the contract's order
COUNT_LABELS = tuple((outcome.value, summary_key(outcome)) for outcome in Outcome)


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:.1f}%"


def _counts(summary: RecallSummary) -> dict[str, int]:
    counts = {"passed": summary["passed"], "failed": summary["failed"],
              "errors": summary["errors"], "skipped": summary["skipped"]}
    return {outcome.value: counts[summary_key(outcome)] for outcome in Outcome}


def recall_section(pair: str, dump: RecallDump, cases: PairCases) -> Section:
    s = dump["summary"]
    status = run_status(dump)
    return Section(
        name=pair,
        subject=f"{dump['model']['key']} on {dump['corpus']['name']}",
        outcomes=_counts(s),
        figures=(("matched", _pct(s["matched_pct"]) or "—"),
                 ("pass rate", _pct(s["pass_rate"]) or "—"),
                 ("prompt", prompt_size(s) + " tokens")),
        status=status, ok=status == "ok",
        problems=tuple(cases.problems), more_problems=cases.more_problems,
        skip_reasons=tuple(cases.skip_reasons.most_common(SHOWN_SKIP_REASONS)))


def search_section(pair: str, report: SearchReport, cases: PairCases) -> Section:
    modes = engine_modes_of(report.header)
    engines = [engine_label(name, modes) for name in report.engines if name != "ultimate"]
    judge = report.header.get("judge")
    subject = ", ".join(engines) + f" on {report.num_queries} {report.benchmark} queries"
    if judge:
        subject += f", judged by {judge['model']} ({judge['prompt_version']})"
    complete = report.complete if report.complete is not None else not report.in_progress
    return Section(
        name=pair, subject=subject,
        outcomes={outcome.value: cases.outcomes[outcome.value] for outcome in Outcome},
        figures=(), status="ok" if complete else "incomplete", ok=complete,
        problems=tuple(cases.problems), more_problems=cases.more_problems,
        skip_reasons=tuple(cases.skip_reasons.most_common(SHOWN_SKIP_REASONS)))


def recall_table(dumps: Sequence[RecallDump]) -> Table:
    """Every pair's figures, the terminal's columns (``report.terminal.summary_table``)."""
    head = ("corpus", "model", "prompt tokens", "cases", "passed", "failed", "errors",
            "skipped", "matched", "pass rate", "hallucinated", "reindented", "bonus", "status")
    rows = []
    for dump in dumps:
        s = dump["summary"]
        rows.append(tuple(str(cell) for cell in (
            dump["corpus"]["name"], dump["model"]["key"], prompt_size(s), s["cases"],
            s["passed"], s["failed"], s["errors"], s["skipped"],
            _pct(s["matched_pct"]) or "—", _pct(s["pass_rate"]) or "—",
            s["hallucinated"], s["reindented"], s["bonus"], run_status(dump))))
    return Table(head, tuple(rows))


def evaluation_html(recall: Sequence[tuple[str, RecallDump]],
                    search: Sequence[tuple[str, SearchReport]],
                    settled: SettledCases) -> Markup:
    """The summary block: recall pairs (``(pair, dump)``) and search benches
    (``(pair, report summary)``) with their settled cases."""
    tables = [(engine_summary(report), report) for _, report in search]
    judged = any(report.kind != "known_item" for _, report in search)
    ratings, relevant = rating_legend() if judged else ((), 0)
    return render(
        "report/evaluation.html.j2",
        recall=[recall_section(pair, dump, settled.of(pair)) for pair, dump in recall],
        recall_table=recall_table([dump for _, dump in recall]) if recall else None,
        effective_lengths=effective_length_section([dump for _, dump in recall]),
        search=[(search_section(pair, report, settled.of(pair)), summary)
                for (pair, report), (summary, _) in zip(search, tables, strict=True)],
        diff_legend=DIFF_LEGEND if recall else (),
        rating_legend=ratings,
        relevant=relevant,
        count_labels=COUNT_LABELS,
    )
