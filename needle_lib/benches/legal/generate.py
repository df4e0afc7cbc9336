"""Legal gold generation: source clients (and an LLM) in, gold rows out.

Two suites, each pure over its inputs, so tests hand them loopback fakes and a scheduler can
drive them:

- ``caselaw``: per court, published opinions from the last ``months_back`` full calendar
  months (the current month is left out: it is still filling up). Each month's cases are
  shuffled with the seed, then the months are visited newest first, round-robin, taking
  the first ``per_court`` cases whose caption makes a usable query. Months are fetched only
  when the round-robin reaches them, so a court with cases in its recent months costs a
  handful of requests, not ``months_back``; the rows are the same as fetching everything.
- ``code``: per CFR title, ``3 × per_title`` sections drawn with the seed from the title's
  structure, projected into queries by the LLM in order, in batches of just as many as are
  still missing, and checked (``code_query``); the first ``per_title`` that pass are kept.

Same seed and same source answers, same rows (the LLM aside): draws are seeded, work runs
concurrently but results keep input order, and syntax cycles are applied afterwards. A
failed fetch drops that month, section or title (counted), never the run; only a
CourtListener token refusal stops it, since every later request would fail the same way.
Caselaw runs first, so a bad token costs no LLM calls.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import cycle
from typing import NotRequired, TypeAlias, TypedDict

from needle_lib.benches import generation
from needle_lib.benches.generation import GoldRow, Stamp, all_finished
from needle_lib.benches.legal import code_query
from needle_lib.benches.legal.caption import (
    DEFAULT_COURTS,
    SYNTAX_CYCLE,
    CaptionQuery,
    caption_query,
    party_tokens,
)
from needle_lib.benches.legal.sources import (
    Case,
    CourtListenerClient,
    EcfrClient,
    Section,
    SectionRef,
    SectionXMLError,
)
from needle_lib.benches.projection import read_reply
from needle_lib.benches.rows import dedupe_rows
from needle_lib.llm import AsyncChatClient, LLMError
from needle_lib.net.sources import SourceError

SUITES = ("caselaw", "code")
DEFAULT_TITLES = (7, 12, 14, 17, 21, 26, 29, 40, 47, 49)
CANDIDATES_PER_ROW = 3
MIN_SECTION_CHARS = 200  # shorter sections are definitions stubs and cross-references
PRODUCER = "needle legal"

#: Why a month, case, section or title yielded no row, in the order the summary lists them.
DROP_REASONS = {
    "fetch_errors": "fetch errors",
    "unusable_records": "unusable case records",
    "generic_captions": "generic captions",
    "short_courts": "courts short of --per-court",
    "bad_xml": "unusable section XML",
    "thin_sections": "thin sections",
    "llm_refusals": "LLM refusals",
    "llm_errors": "LLM errors",
    "rejected_queries": "rejected queries",
    "short_titles": "titles short of --per-title",
}


@dataclass(frozen=True)
class Options:
    """What to generate. ``now`` stamps rows and ends the month windows."""

    now: datetime
    suites: tuple[str, ...] = SUITES
    courts: tuple[str, ...] = DEFAULT_COURTS
    months_back: int = 18
    per_court: int = 4
    titles: tuple[int, ...] = DEFAULT_TITLES
    per_title: int = 4
    seed: int = 0
    llm_concurrency: int = 8


class Tally(generation.Tally):
    """Legal drop counts (see ``DROP_REASONS``), first message of each, and progress line."""

    reasons = DROP_REASONS


def month_windows(now: datetime, months_back: int) -> list[tuple[date, date]]:
    """The ``months_back`` full calendar months before ``now``'s month, newest first, as
    (first day, last day): CourtListener's date filters include both ends."""
    windows = []
    first_of_month = now.date().replace(day=1)
    for _ in range(months_back):
        last = first_of_month - timedelta(days=1)
        first_of_month = last.replace(day=1)
        windows.append((first_of_month, last))
    return windows


class CaseProvenance(TypedDict):
    producer: str
    case_name: str
    court: str
    url: str
    date_filed: str


class CodeProvenance(TypedDict):
    producer: str
    citation: str
    heading: str
    url: str
    llm_model: str
    prompt_version: str


class LegalOrigin(TypedDict):
    """A legal row's ``query_origin``; ``bucket`` is NEEDLE's name for the suite."""

    bucket: str
    suite: str
    syntax: str
    provenance: CaseProvenance | CodeProvenance


class CaseIds(TypedDict):
    """What identifies a case (``match.LegalGold.from_row`` reads these)."""

    cluster: str
    docket: NotRequired[str]
    cites: NotRequired[list[str]]


class CaseGold(TypedDict):
    case_key: str
    ids: CaseIds
    party_tokens: list[str]
    court: str
    date_filed: str
    case_name: str


class CodeIds(TypedDict):
    cfr: str


class CodeGold(TypedDict):
    case_key: str
    ids: CodeIds
    citation: str
    heading: str


#: A row ``needle legal generate`` writes (NEEDLE's legal row format, objects not strings).
LegalRow: TypeAlias = GoldRow[LegalOrigin, CaseGold | CodeGold]


def _row(stamp: Stamp, text: str, *, suite: str, syntax: str,
         provenance: CaseProvenance | CodeProvenance, gold: CaseGold | CodeGold) -> LegalRow:
    """One gold row in NEEDLE's legal row format (``query_origin``/``gold`` objects)."""
    origin: LegalOrigin = {"bucket": suite, "suite": suite, "syntax": syntax,
                           "provenance": provenance}
    return stamp.gold_row(text, source="legal", origin=origin, gold=gold)


# --- caselaw -------------------------------------------------------------------------------

async def _court_picks(client: CourtListenerClient, court: str,
                       windows: list[tuple[date, date]], options: Options,
                       tally: Tally) -> list[tuple[Case, CaptionQuery]]:
    fetched: dict[int, list[Case]] = {}

    async def month(index: int) -> list[Case]:
        if index not in fetched:
            first, last = windows[index]
            try:
                cases, unusable = await client.opinions(court, filed_after=first,
                                                        filed_before=last)
            except SourceError as exc:
                tally.drop("fetch_errors", sample=str(exc))
                cases, unusable = [], 0
            if unusable:
                tally.drop("unusable_records", unusable)
            random.Random(f"{options.seed}:{court}:{first.isoformat()}").shuffle(cases)
            fetched[index] = cases
        return fetched[index]

    picks: list[tuple[Case, CaptionQuery]] = []
    seen: set[int] = set()
    depth = 0
    while len(picks) < options.per_court:
        reached = False
        for index in range(len(windows)):
            cases = await month(index)
            if depth >= len(cases):
                continue
            reached = True
            case = cases[depth]
            if case.cluster_id in seen:
                continue
            seen.add(case.cluster_id)
            query = caption_query(case.case_name, court)
            if query is None:
                tally.drop("generic_captions")
                continue
            picks.append((case, query))
            if len(picks) == options.per_court:
                break
        if not reached:
            break
        depth += 1
    if len(picks) < options.per_court:
        tally.drop("short_courts", sample=f"{court}: {len(picks)} of {options.per_court}")
    tally.advance()
    return picks


def _case_row(stamp: Stamp, case: Case, query: CaptionQuery, syntax: str) -> LegalRow:
    text, applied = query.with_syntax(syntax, case.date_filed)
    ids: CaseIds = {"cluster": str(case.cluster_id)}
    if case.docket:
        ids["docket"] = case.docket
    if case.citations:
        ids["cites"] = list(case.citations)
    gold: CaseGold = {"case_key": str(case.cluster_id), "ids": ids,
                      "party_tokens": party_tokens(case.case_name), "court": case.court_id,
                      "date_filed": case.date_filed.isoformat(), "case_name": case.case_name}
    provenance: CaseProvenance = {
        "producer": PRODUCER, "case_name": case.case_name, "court": case.court_id,
        "url": case.url, "date_filed": case.date_filed.isoformat()}
    return _row(stamp, text, suite="caselaw", syntax=applied, provenance=provenance, gold=gold)


async def caselaw_rows(client: CourtListenerClient, options: Options,
                       tally: Tally) -> list[LegalRow]:
    windows = month_windows(options.now, options.months_back)
    tally.stage("legal caselaw: courts", len(options.courts))
    per_court = await all_finished(_court_picks(client, court, windows, options, tally)
                                   for court in options.courts)
    stamp, syntaxes = Stamp(options.now), cycle(SYNTAX_CYCLE)
    return [_case_row(stamp, case, query, next(syntaxes))
            for picks in per_court for case, query in picks]


# --- code ----------------------------------------------------------------------------------

@dataclass
class _Projector:
    """Section → checked query, with the LLM calls bounded across titles."""

    ecfr: EcfrClient
    llm: AsyncChatClient
    tally: Tally
    slots: asyncio.Semaphore

    async def __call__(self, ref: SectionRef, issue_date: str) -> tuple[Section, str] | None:
        try:
            section = await self.ecfr.section(ref, issue_date)
        except SourceError as exc:
            self.tally.drop("fetch_errors", sample=str(exc))
            return None
        except SectionXMLError as exc:
            self.tally.drop("bad_xml", sample=str(exc))
            return None
        if len(section.text) < MIN_SECTION_CHARS:
            self.tally.drop("thin_sections")
            return None
        async with self.slots:
            self.tally.llm_calls += 1
            try:
                reply = await self.llm.complete(code_query.prompt_messages(section))
            except LLMError as exc:
                self.tally.drop("llm_errors", sample=str(exc))
                return None
        query = read_reply(reply.content, code_query.REFUSAL)
        if query is None:
            self.tally.drop("llm_refusals")
            return None
        why = code_query.rejection(query, section)
        if why is not None:
            self.tally.drop("rejected_queries", sample=f"{ref.citation}: {query!r}: {why}")
            return None
        return section, query


async def _title_picks(ecfr: EcfrClient, project: _Projector, title: int,
                       dates: dict[int, str], options: Options,
                       tally: Tally) -> list[tuple[Section, str]]:
    picks: list[tuple[Section, str]] = []
    issue_date = dates.get(title, "")
    refs: list[SectionRef] = []
    if issue_date:
        try:
            refs = await ecfr.sections(title, issue_date)
        except SourceError as exc:
            tally.drop("fetch_errors", sample=str(exc))
    rng = random.Random(f"{options.seed}:title-{title}")
    candidates = rng.sample(refs, min(len(refs), options.per_title * CANDIDATES_PER_ROW))
    start = 0
    while len(picks) < options.per_title and start < len(candidates):
        batch = candidates[start:start + options.per_title - len(picks)]
        start += len(batch)
        results = await all_finished(project(ref, issue_date) for ref in batch)
        picks.extend(r for r in results if r is not None)
    if len(picks) < options.per_title:
        why = "" if issue_date else " (reserved, or not in titles.json)"
        tally.drop("short_titles",
                   sample=f"title {title}: {len(picks)} of {options.per_title}{why}")
    tally.advance()
    return picks


def _code_row(stamp: Stamp, section: Section, query: str, syntax: str,
              model: str) -> LegalRow:
    ref = section.ref
    key = f"{ref.title}:{ref.identifier}"
    gold: CodeGold = {"case_key": key, "ids": {"cfr": key}, "citation": ref.citation,
                      "heading": section.heading}
    provenance: CodeProvenance = {
        "producer": PRODUCER, "citation": ref.citation, "heading": section.heading,
        "url": ref.url, "llm_model": model, "prompt_version": code_query.PROMPT_VERSION}
    return _row(stamp, code_query.with_syntax(query, syntax), suite="code", syntax=syntax,
                provenance=provenance, gold=gold)


async def code_rows(ecfr: EcfrClient, llm: AsyncChatClient, options: Options,
                    tally: Tally) -> list[LegalRow]:
    try:
        dates = await ecfr.issue_dates()
    except SourceError as exc:
        tally.drop("fetch_errors", sample=str(exc))
        tally.drop("short_titles", len(options.titles))
        return []
    tally.stage("legal code: titles", len(options.titles))
    project = _Projector(ecfr, llm, tally, asyncio.Semaphore(max(1, options.llm_concurrency)))
    per_title = await all_finished(_title_picks(ecfr, project, title, dates, options, tally)
                                   for title in options.titles)
    stamp, syntaxes = Stamp(options.now), cycle(code_query.SYNTAX_CYCLE)
    return [_code_row(stamp, section, query, next(syntaxes), llm.config.name)
            for picks in per_title for section, query in picks]


async def generate(options: Options, *, courtlistener: CourtListenerClient | None = None,
                   ecfr: EcfrClient | None = None, llm: AsyncChatClient | None = None,
                   tally: Tally | None = None) -> list[LegalRow]:
    """Gold rows for ``options.suites``: caselaw needs ``courtlistener``, code needs
    ``ecfr`` and ``llm``. Rows are deduplicated by ``query_id``, first kept."""
    tally = tally or Tally()
    rows: list[LegalRow] = []
    try:
        if "caselaw" in options.suites:
            if courtlistener is None:
                raise ValueError("the caselaw suite needs a CourtListener client")
            rows += await caselaw_rows(courtlistener, options, tally)
        if "code" in options.suites:
            if ecfr is None or llm is None:
                raise ValueError("the code suite needs an eCFR client and an LLM")
            rows += await code_rows(ecfr, llm, options, tally)
    finally:
        tally.close()
    return dedupe_rows(rows)
