"""The search summary: one row per engine, ``ultimate`` last (nDCG, or recall/MRR for a
known-item bench). One set of columns, rendered for the terminal (and ``needle publish``'s
job summary) and for the pytest-html report, so the two never disagree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from needle_lib.contract.report import JudgedReport, KnownItemEngine, KnownItemReport, SearchReport
from needle_lib.contract.schema import engine_modes_of


@dataclass(frozen=True)
class EngineSummary:
    title: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def engine_label(name: str, modes: Mapping[str, str]) -> str:
    """``tavily (advanced)``: an engine as a run's listings show it, with the env-tuned mode
    it ran in (the header's ``engine_modes``), since two modes are two setups."""
    mode = modes.get(name)
    return name if mode is None else f"{name} ({mode})"


def _cell(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def engine_summary(report: SearchReport) -> EngineSummary:
    k = report.k
    known_item = isinstance(report, KnownItemReport)
    metrics = (f"recall@{k}", f"MRR@{k}") if known_item else (f"nDCG@{k}",)
    head = ("engine", *metrics, "scored", "search err", "judge err", "skipped", "retries",
            "p50 s", "p95 s")
    title = f"{report.benchmark}: {report.num_queries} queries"
    if isinstance(report, JudgedReport):
        title += f", {report.judged_pairs} judged pairs"
    rows = []
    modes = engine_modes_of(report.header)
    for name, engine in report.engines.items():
        figures = ((_cell(engine.recall_at_k), _cell(engine.mrr_at_k))
                   if isinstance(engine, KnownItemEngine) else (_cell(engine.mean_ndcg),))
        lat = engine.latency
        rows.append((engine_label(name, modes), *figures, str(engine.num_scored),
                     str(engine.search_errors), str(engine.judge_errors), str(engine.skipped),
                     str(engine.retries),
                     _cell(lat.p50 if lat else None, 2), _cell(lat.p95 if lat else None, 2)))
    return EngineSummary(title, head, tuple(rows))


#: Terminal column widths; the first column is left-aligned, the figures right-aligned.
_WIDTHS = {"engine": 18, "nDCG": 8, "recall": 9, "MRR": 7, "search err": 10, "judge err": 9}


def engine_table(report: SearchReport) -> str:
    """The summary as a plain-text table for a terminal or a Markdown code block."""
    summary = engine_summary(report)
    widths = [_WIDTHS.get(h.split("@")[0], 7) for h in summary.head]

    def line(cells: tuple[str, ...]) -> str:
        first, *rest = cells
        return " ".join([f"{first:<{widths[0]}}",
                         *(f"{c:>{w}}" for c, w in zip(rest, widths[1:], strict=True))])

    header = line(summary.head)
    return "\n".join([summary.title, header, "-" * len(header),
                      *(line(row) for row in summary.rows)])
