"""TREC interchange: a search run as TREC run files and qrels (issue 36 item 3).

``trec_eval``, ``ir_measures`` and ``ranx`` read two whitespace-separated formats: a run
(``qid Q0 docno rank score tag``, one file per system) and qrels (``qid 0 docno rel``).
Writing a search report in them lets any standard measure be computed on Needle's results,
and Needle's own figures be checked against an independent implementation.

Choices, and why:

- **docno** is the result's normalised URL (``metrics.urls.normalize_url``): the key Needle
  pools, judges and de-duplicates by, readable, and the same in every export, so qrels of
  two runs can be combined. It never holds whitespace (the normaliser escapes it).
- **qid** is the query id, with ``%``, whitespace and controls percent-escaped (a
  reversible spelling, so distinct ids stay distinct).
- **rank** is the engine's own rank, and **score** falls strictly with it: trec_eval orders
  by score and breaks ties by docno, which would reorder an engine's list.
- **A repeated page** (a URL the engine already returned, however spelled) is written at its
  rank as ``<docno>#repeat-<n>``, a document no qrel names, so it gains 0 there: Needle's
  redundancy penalty in TREC terms, with every later result keeping its rank. (A run cannot
  hold one docno twice; dropping the repeat would move the results below it up.) A
  normalised URL never holds ``#``, so no real page is spelled that way.
- **Qrels** hold one line per judged (query, page): the judge's 0–4 rating (judged benches)
  or 1/0 for whether the result carried the gold (known-item: the matcher's or the backstop
  judge's verdict). A page rated differently in two engines' lists (different snippets) gets
  its best rating, as Needle's pooled ideal does (a repeat's rating included);
  ``conflicting_ratings`` counts such pages.
- **Cases with no results to write**: a failed search or a skipped engine has no line (a
  TREC run cannot tell "searched, found nothing" from "not asked"); the manifest lists every
  case Needle did not score, with why, and per engine the queries it did score, so Needle's
  means can be reproduced exactly (see ``docs/matching.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import msgspec

from needle_lib.benches.registry import bench_named, build_report, by_query
from needle_lib.contract.outcome import is_skipped
from needle_lib.contract.records import BenchCaseRecord, SearchResultRecord
from needle_lib.contract.report import (
    JudgedQueryRow,
    JudgedReport,
    KnownItemQueryRow,
    SearchReport,
    built_rows,
)
from needle_lib.contract.schema import SearchRun
from needle_lib.errors import UsageError
from needle_lib.jsonio import write_text_atomic
from needle_lib.metrics.ndcg import GAINS
from needle_lib.metrics.urls import normalize_url
from needle_lib.names import is_plain

EXPORT_FORMAT: Final = "needle-trec-export"
EXPORT_VERSION: Final = 1
QRELS_FILE: Final = "qrels.txt"
MANIFEST_FILE: Final = "manifest.json"
RUN_SUFFIX: Final = ".run"
REPEAT_MARK: Final = "#repeat-"

JUDGED_RELEVANCE = ("the judge's Needs Met rating (0 FailsM .. 4 FullyM); a page rated in "
                    "several lists has its best rating")
KNOWN_ITEM_RELEVANCE = ("1: the result carries the gold answer (matcher or backstop judge), "
                        "0: it does not; a page has 1 if any list's copy carried it")


class TrecExportError(UsageError):
    """A report that cannot be written as TREC files; the message names the case."""


@dataclass(frozen=True)
class RunLine:
    """One line of a TREC run file."""

    qid: str
    docno: str
    rank: int
    score: int
    tag: str

    def text(self) -> str:
        return f"{self.qid} Q0 {self.docno} {self.rank} {self.score} {self.tag}"


@dataclass(frozen=True)
class Qrel:
    """One line of a TREC qrels file."""

    qid: str
    docno: str
    relevance: int

    def text(self) -> str:
        return f"{self.qid} 0 {self.docno} {self.relevance}"


class Unscored(msgspec.Struct, frozen=True):
    """A case Needle left out of an engine's mean, and why."""

    qid: str
    reason: str


class EngineManifest(msgspec.Struct, kw_only=True):
    run: str
    lines: int
    repeats: int
    #: qids whose score is in Needle's mean for this engine (its nDCG@k, or recall/MRR)
    scored_queries: list[str]
    unscored: list[Unscored]


class JudgeInfo(msgspec.Struct, kw_only=True):
    """Who rated the pages (judged benches; the known-item backstop judge too)."""

    model: str | None = None
    prompt_version: str | None = None


class QrelsManifest(msgspec.Struct, kw_only=True):
    file: str
    count: int
    queries: int
    relevance: str
    conflicting_ratings: int
    #: the report's ``judged_pairs`` (judged benches): distinct (query, page, evidence) the
    #: judge rated, more than ``count`` where engines showed one page with other snippets
    report_judged_pairs: int | None


class Manifest(msgspec.Struct, kw_only=True):
    """``manifest.json``: what the export holds, and what Needle scored."""

    format: str = EXPORT_FORMAT
    version: int = EXPORT_VERSION
    source: str
    bench: str
    kind: str
    k: int
    #: Needs Met rating -> Needle's gain (judged benches): pass to nDCG as its gains
    gains: dict[int, float] | None
    judge: JudgeInfo | None
    qrels: QrelsManifest
    engines: dict[str, EngineManifest]


@dataclass
class TrecExport:
    """A report as TREC lines: a run per engine, the qrels, and the manifest."""

    runs: dict[str, list[RunLine]]
    qrels: list[Qrel]
    manifest: Manifest

    def write(self, directory: Path) -> list[Path]:
        """The files in ``directory`` (created; it must not hold files already, so no run
        file of an earlier export is left beside these)."""
        if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
            raise TrecExportError(f"{directory}: not an empty directory; export into a new "
                                  "one (an earlier export's run files would mix with these)")
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for engine, lines in self.runs.items():
            written.append(_write_lines(directory / f"{engine}{RUN_SUFFIX}",
                                        (line.text() for line in lines)))
        written.append(_write_lines(directory / QRELS_FILE, (q.text() for q in self.qrels)))
        manifest = directory / MANIFEST_FILE
        write_text_atomic(manifest, msgspec.json.format(
            msgspec.json.encode(self.manifest), indent=1).decode() + "\n", durable=False)
        written.append(manifest)
        return written


def _write_lines(path: Path, lines: Iterable[str]) -> Path:
    text = "".join(f"{line}\n" for line in lines)
    write_text_atomic(path, text, durable=False)
    return path


def trec_qid(query_id: str) -> str:
    """The query id as one TREC token: ``%``, whitespace and controls percent-escaped."""
    if not query_id:
        raise TrecExportError("a case has an empty query_id; a TREC qid cannot be empty")
    if query_id.isprintable() and " " not in query_id and "%" not in query_id:
        return query_id
    return "".join(quote(ch, safe="") if ch in "% " or not ch.isprintable() else ch
                   for ch in query_id)


def trec_docno(url: str, where: str) -> str:
    """The result's normalised URL, which holds no whitespace; an empty one is an error."""
    docno = normalize_url(url)
    if not docno:
        raise TrecExportError(f"{where}: result URL {url!r} has no host or path to name it")
    return docno


@dataclass
class _Pool:
    """Best relevance per (qid, docno), in first-seen order, and pages rated differently."""

    best: dict[tuple[str, str], int] = field(default_factory=dict)
    conflicting: set[tuple[str, str]] = field(default_factory=set)

    def add(self, key: tuple[str, str], relevance: int) -> None:
        if key in self.best and self.best[key] != relevance:
            self.conflicting.add(key)
        self.best[key] = max(self.best.get(key, relevance), relevance)


def _relevance(kind: str, result: SearchResultRecord) -> int | None:
    """The result's qrel value, or None when it was not judged (no qrel)."""
    if kind == "judged":
        rating = result.get("rating")
        return rating if isinstance(rating, int) and rating in GAINS else None
    matched = result.get("det_match") is True or result.get("judge_match") is True
    return 1 if matched else 0


def _report_kind(header: dict[str, Any]) -> str:
    kind = header.get("kind") or bench_named(header["bench"]).kind
    if kind not in ("judged", "known_item"):
        raise TrecExportError(f"report kind {kind!r} is neither judged nor known_item")
    return str(kind)


def _judge_info(header: dict[str, Any]) -> JudgeInfo | None:
    judge = header.get("judge")
    if not isinstance(judge, dict):
        return None
    model, prompt = judge.get("model"), judge.get("prompt_version")
    return JudgeInfo(model=model if isinstance(model, str) else None,
                     prompt_version=prompt if isinstance(prompt, str) else None)


def _why_unscored(case: BenchCaseRecord, row: JudgedQueryRow | KnownItemQueryRow,
                  kind: str) -> str:
    if is_skipped(case.get("outcome")):
        return f"skipped: {case.get('skip_reason') or 'not asked'}"
    if case.get("search_error") is not None:
        return f"search failed: {case['search_error']}"
    if case.get("judge_errors"):
        return f"{case['judge_errors']} judge error(s)"
    if kind == "judged" and row.get("pool_incomplete"):
        return "pool incomplete: another engine's result could not be judged"
    if kind == "judged":
        return "no engine found a relevant result (ideal DCG 0)"
    return "not scored"


def build_export(source: Path, run: SearchRun) -> TrecExport:
    """The TREC files of one search run (its header and cases, as ``read_run`` gives them)."""
    header, cases = run
    kind = _report_kind(header)
    report = build_report(header, cases, in_progress=False)
    runs: dict[str, list[RunLine]] = {}
    repeats: dict[str, int] = {}
    pool = _Pool()
    grouped = by_query(cases)
    for query_id, present in grouped.items():
        qid = trec_qid(query_id)
        for engine, case in present.items():
            if not is_plain(engine):
                raise TrecExportError(f"case {query_id!r}: engine name {engine!r} is not a "
                                      "plain name; it would name a run file")
            lines = runs.setdefault(engine, [])
            repeats.setdefault(engine, 0)
            if is_skipped(case.get("outcome")) or case.get("search_error") is not None:
                continue
            results = case["results"]
            seen: dict[str, int] = {}
            for rank, result in enumerate(results, start=1):
                docno = trec_docno(result["url"], f"case {query_id!r} on {engine}, rank {rank}")
                relevance = _relevance(kind, result)
                if relevance is not None:  # a repeat's rating joins the pool, as in Needle's
                    pool.add((qid, docno), relevance)
                copies = seen[docno] = seen.get(docno, 0) + 1
                if copies > 1:
                    repeats[engine] += 1
                    docno = f"{docno}{REPEAT_MARK}{copies}"
                lines.append(RunLine(qid, docno, rank, len(results) - rank + 1, engine))
    qrels = [Qrel(qid, docno, rel) for (qid, docno), rel in pool.best.items()]
    manifest = Manifest(
        source=str(source), bench=header["bench"], kind=kind, k=report.k,
        gains=dict(GAINS) if kind == "judged" else None,
        judge=_judge_info(header),
        qrels=QrelsManifest(
            file=QRELS_FILE, count=len(qrels), queries=len({q.qid for q in qrels}),
            relevance=JUDGED_RELEVANCE if kind == "judged" else KNOWN_ITEM_RELEVANCE,
            conflicting_ratings=len(pool.conflicting),
            report_judged_pairs=(report.judged_pairs if isinstance(report, JudgedReport)
                                 else None)),
        engines={engine: _engine_manifest(engine, lines, repeats[engine], report, grouped,
                                          kind)
                 for engine, lines in runs.items()},
    )
    return TrecExport(runs=runs, qrels=qrels, manifest=manifest)


def _engine_manifest(engine: str, lines: list[RunLine], repeats: int, report: SearchReport,
                     grouped: dict[str, dict[str, BenchCaseRecord]],
                     kind: str) -> EngineManifest:
    score_key = "ndcg" if kind == "judged" else "score"
    scored, unscored = [], []
    for row in built_rows(report.engines[engine]):
        qid = trec_qid(row["query_id"])
        if row.get(score_key) is not None:
            scored.append(qid)
        else:
            case = grouped[row["query_id"]][engine]
            unscored.append(Unscored(qid, _why_unscored(case, row, kind)))
    return EngineManifest(run=f"{engine}{RUN_SUFFIX}", lines=len(lines), repeats=repeats,
                          scored_queries=scored, unscored=unscored)
