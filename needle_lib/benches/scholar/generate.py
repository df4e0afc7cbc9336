"""Scholar gold rows: papers balanced over domain × age cells, four paired queries per paper.

Pure: the source clients and the LLM are passed in, so tests hand it loopback fakes, and the
same seed over the same source answers gives the same rows. How a run goes:

1. **Candidates.** Each cell (a domain × an age bucket) lists papers from its source in up to
   8 date windows spread over the age band, newest first, and samples a few per window
   (seeded), so a cell is not just the papers of its newest day. arXiv papers must have their
   primary category in the cell's domain: a cross-listed paper is labelled by where it lives.
   Duplicates, titles under four words or too generic to name one paper ("A Survey of
   Methods"), and papers without ids are dropped. Europe PMC records without a PMID get one
   from NCBI's converter when it has one.
2. **Queries.** Candidates are tried in order, as many at a time as the cell still needs:
   the full text is fetched and the LLM writes the body, clue and tot queries, each checked
   (``buckets``). One failed bucket drops the whole paper (paired retention), so every bucket
   is measured on the same papers and title vs body vs clue vs tot is a fair comparison.
   A cell keeps its first ``per_cell`` papers in candidate order; fewer is a short cell.
3. **Rows.** One row per paper and requested bucket, in cell order, deduplicated by
   ``query_id``.

A source that fails (a window listing, a full text) costs what it would have produced,
counted in the final summary; it never aborts the run.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import NotRequired, TextIO, TypeAlias, TypedDict

from needle_lib.benches import generation
from needle_lib.benches.generation import GoldRow
from needle_lib.benches.scholar.bodies import BodyError
from needle_lib.benches.scholar.buckets import (
    BUCKETS,
    LLM_BUCKETS,
    MAX_TOKENS,
    PROMPT_VERSION,
    check_query,
    clean_answer,
    degrade_title,
    prompt_messages,
    title_is_specific,
)
from needle_lib.benches.scholar.papers import (
    AGE_BANDS,
    ARXIV_DOMAINS,
    HEALTH_DOMAIN,
    Paper,
    age_bucket,
)
from needle_lib.benches.scholar.sources import ArxivApi, ArxivHtml, EuropePmc, NcbiIdConverter
from needle_lib.llm import AsyncChatClient, LLMError
from needle_lib.net.sources import SourceClient, SourceError
from needle_lib.progress import Progress

SOURCE = "scholar"
SUITES = ("arxiv", "europepmc")
DEFAULT_AGE_BUCKETS = ("7d", "30d", "1y")
DEFAULT_PER_CELL = 7
OVERSAMPLE = 3  # candidates listed per kept paper: checks drop many
MAX_WINDOWS = 8
ARXIV_POOL, ARXIV_MAX_RESULTS = 20, 1000  # listed per sampled arXiv paper; API page cap
EUROPEPMC_POOL, EUROPEPMC_MIN_PAGE, EUROPEPMC_MAX_PAGE = 5, 25, 1000
MIN_BODY_CHARS = 1500  # less is a stub page or a metadata-only record, not a full text


@dataclass(frozen=True)
class Options:
    now: datetime
    seed: int
    suites: tuple[str, ...] = SUITES
    age_buckets: tuple[str, ...] = DEFAULT_AGE_BUCKETS
    per_cell: int = DEFAULT_PER_CELL
    buckets: tuple[str, ...] = BUCKETS
    #: Candidates worked on at once (full text + LLM calls); sources pace themselves.
    concurrency: int = 4

    @property
    def llm_buckets(self) -> tuple[str, ...]:
        return tuple(b for b in LLM_BUCKETS if b in self.buckets)


@dataclass
class Sources:
    """The clients of one run; a suite's clients may be None when the suite is not run."""

    arxiv: ArxivApi | None = None
    arxiv_html: ArxivHtml | None = None
    europepmc: EuropePmc | None = None
    ncbi: NcbiIdConverter | None = None

    def clients(self) -> list[SourceClient]:
        return [c for c in (self.arxiv, self.arxiv_html, self.europepmc, self.ncbi) if c]


@dataclass
class Tally:
    """What a run dropped and why, and what its sources did: the final summary line."""

    sources: Sources
    drops: Counter[str] = field(default_factory=Counter)
    samples: dict[str, str] = field(default_factory=dict)
    source_errors: Counter[str] = field(default_factory=Counter)
    short_cells: list[str] = field(default_factory=list)
    llm_calls: int = 0
    papers: int = 0
    rows: Counter[str] = field(default_factory=Counter)

    def drop(self, key: str, sample: str | None = None) -> None:
        self.drops[key] += 1
        if sample:
            self.samples.setdefault(key, " ".join(sample.split())[:160])

    def source_error(self, suite: str, error: Exception) -> None:
        self.source_errors[suite] += 1
        self.samples.setdefault(f"source:{suite}", " ".join(str(error).split())[:160])

    def summary(self) -> str:
        rows = ", ".join(f"{bucket} {n}" for bucket, n in self.rows.items()) or "none"
        parts = [f"kept {self.papers} papers ({rows})"]
        drops = ", ".join(
            f"{key} {n}" + (f" (e.g. {self.samples[key]})" if key in self.samples else "")
            for key, n in sorted(self.drops.items()))
        parts.append(f"dropped {sum(self.drops.values())}" + (f": {drops}" if drops else ""))
        if self.short_cells:
            parts.append(f"short cells {len(self.short_cells)}: {', '.join(self.short_cells)}")
        if self.source_errors:
            parts.append("source errors: " + ", ".join(
                f"{suite} {n} (e.g. {self.samples[f'source:{suite}']})"
                for suite, n in sorted(self.source_errors.items())))
        requests = ", ".join(f"{c.source} {c.stats.requests}" for c in self.sources.clients())
        parts.append(f"requests: {requests}, llm {self.llm_calls}")
        return "; ".join(parts)


def age_windows(bucket: str, now: datetime, count: int) -> list[tuple[date, date]]:
    """``count`` contiguous, non-overlapping date windows over the bucket's band, newest first."""
    oldest, newest = AGE_BANDS[bucket]
    offsets = list(range(newest, oldest + 1))
    size = math.ceil(len(offsets) / count)
    chunks = [offsets[i:i + size] for i in range(0, len(offsets), size)]
    today = now.date()
    return [(today - timedelta(days=chunk[-1]), today - timedelta(days=chunk[0]))
            for chunk in chunks]


def _interleave(lists: list[list[Paper]]) -> list[Paper]:
    merged: list[Paper] = []
    for i in range(max((len(x) for x in lists), default=0)):
        merged.extend(x[i] for x in lists if i < len(x))
    return merged


def _cells(options: Options) -> list[tuple[str, str]]:
    domains = [*ARXIV_DOMAINS] if "arxiv" in options.suites else []
    if "europepmc" in options.suites:
        domains.append(HEALTH_DOMAIN)
    return [(domain, age) for domain in domains for age in options.age_buckets]


async def _cell_candidates(cell: tuple[str, str], sources: Sources, options: Options,
                           tally: Tally) -> list[Paper]:
    domain, age = cell
    wanted = options.per_cell * OVERSAMPLE
    oldest, newest = AGE_BANDS[age]
    windows = age_windows(age, options.now, max(1, min(wanted, MAX_WINDOWS,
                                                      oldest - newest + 1)))
    quota = math.ceil(wanted / len(windows))
    suite = "europepmc" if domain == HEALTH_DOMAIN else "arxiv"
    lists = []
    for index, (first, last) in enumerate(windows):
        try:
            if suite == "arxiv":
                assert sources.arxiv is not None
                listed = await sources.arxiv.listing(
                    domain, first=first, last=last,
                    max_results=min(quota * ARXIV_POOL, ARXIV_MAX_RESULTS))
                listed = [p for p in listed if p.domain == domain]
            else:
                assert sources.europepmc is not None
                listed = await sources.europepmc.listing(
                    first=first, last=last,
                    page_size=min(EUROPEPMC_MAX_PAGE,
                                  max(quota * EUROPEPMC_POOL, EUROPEPMC_MIN_PAGE)))
        except SourceError as exc:
            tally.source_error(suite, exc)
            continue
        rng = random.Random(f"{options.seed}:{domain}:{age}:{index}")
        lists.append(rng.sample(listed, quota) if len(listed) > quota else listed)
    return _interleave(lists)


def _screen(cells: list[tuple[str, str]], listed: list[list[Paper]],
            tally: Tally) -> dict[tuple[str, str], list[Paper]]:
    """Drop duplicates and papers whose title or ids cannot make a fair known-item query."""
    seen: set[str] = set()
    screened: dict[tuple[str, str], list[Paper]] = {}
    for cell, papers in zip(cells, listed, strict=True):
        keep = screened.setdefault(cell, [])
        for paper in papers:
            if paper.key in seen:
                tally.drop("duplicate")
                continue
            seen.add(paper.key)
            if degrade_title(paper.title) is None:
                tally.drop("short_title", paper.title)
            elif not title_is_specific(paper.title):
                tally.drop("generic_title", paper.title)
            elif not paper.ids:
                tally.drop("no_ids", paper.url)
            else:
                keep.append(paper)
    return screened


async def _with_pmids(screened: dict[tuple[str, str], list[Paper]], ncbi: NcbiIdConverter | None,
                      tally: Tally) -> dict[tuple[str, str], list[Paper]]:
    """Europe PMC papers without a PMID get the converter's, so PubMed links find them too."""
    missing = [p.pmcid for papers in screened.values() for p in papers
               if p.pmcid and not p.pmid]
    if not missing or ncbi is None:
        return screened
    try:
        pmids = await ncbi.pmids(missing)
    except SourceError as exc:
        tally.source_error("ncbi", exc)
        return screened
    return {cell: [replace(p, pmid=pmids.get(p.pmcid)) if p.pmcid and not p.pmid else p
                   for p in papers] for cell, papers in screened.items()}


async def _body(paper: Paper, sources: Sources) -> str:
    if paper.suite == "arxiv" and sources.arxiv_html is not None and paper.arxiv:
        return await sources.arxiv_html.body(paper.arxiv)
    if paper.suite == "europepmc" and sources.europepmc is not None and paper.pmcid:
        return await sources.europepmc.body(paper.pmcid)
    raise BodyError(f"no full-text source for {paper.url}")


async def _llm_queries(paper: Paper, sources: Sources, llm: AsyncChatClient | None,
                       options: Options, tally: Tally) -> dict[str, str] | None:
    """The paper's LLM queries, or None (counted) when any requested bucket fails."""
    if not options.llm_buckets:
        return {}
    assert llm is not None
    try:
        body = await _body(paper, sources)
    except (SourceError, BodyError) as exc:
        tally.drop("no_body", str(exc))
        return None
    if len(body) < MIN_BODY_CHARS:
        tally.drop("no_body", f"{paper.url}: only {len(body)} characters of full text")
        return None
    queries = {}
    for bucket in options.llm_buckets:
        tally.llm_calls += 1
        try:
            answer = await llm.complete(prompt_messages(bucket, paper, body),
                                        max_tokens=MAX_TOKENS)
        except LLMError as exc:
            tally.drop(f"{bucket}_llm_error", str(exc))
            return None
        query = clean_answer(answer.content)
        if query is None:
            tally.drop(f"{bucket}_no_query", paper.title)
            return None
        rejection = check_query(bucket, query, paper, body)
        if rejection is not None:
            tally.drop(f"{bucket}_{rejection.reason}", f"{query!r}: {rejection.detail}")
            return None
        queries[bucket] = query
    return queries


async def _fill_cell(cell: tuple[str, str], candidates: list[Paper],
                     attempt: Callable[[Paper], Awaitable[dict[str, str] | None]],
                     options: Options, tally: Tally,
                     progress: Progress) -> list[tuple[Paper, dict[str, str]]]:
    """The cell's first ``per_cell`` surviving candidates, trying only as many as needed."""
    kept: list[tuple[Paper, dict[str, str]]] = []
    position = 0
    while len(kept) < options.per_cell and position < len(candidates):
        wave = candidates[position:position + options.per_cell - len(kept)]
        position += len(wave)
        outcomes = await asyncio.gather(*(attempt(paper) for paper in wave))
        for paper, queries in zip(wave, outcomes, strict=True):
            if queries is not None:
                kept.append((replace(paper, domain=cell[0]), queries))
                progress.advance()
        progress.count("dropped", sum(q is None for q in outcomes))
    if len(kept) < options.per_cell:
        tally.short_cells.append(f"{cell[0]}/{cell[1]} {len(kept)}/{options.per_cell}")
        progress.count("short cells")
    return kept


class ScholarProvenance(TypedDict):
    suite: str
    title: str
    url: str
    published_date: str
    llm_model: NotRequired[str | None]
    prompt_version: NotRequired[str]


class ScholarOrigin(TypedDict):
    bucket: str
    suite: str
    provenance: ScholarProvenance


class ScholarGoldRecord(TypedDict):
    """A scholar row's ``gold`` (``match.ScholarGold.from_row`` reads it)."""

    paper_key: str
    ids: dict[str, str]  # id kind (``papers.ID_KINDS``) → id
    published_date: str
    age_bucket: str
    domain: str


#: A row ``needle scholar generate`` writes (NEEDLE's scholar row format).
ScholarRow: TypeAlias = GoldRow[ScholarOrigin, ScholarGoldRecord]


def gold_row(paper: Paper, bucket: str, text: str, *, options: Options,
             model: str | None) -> ScholarRow:
    """One row in NEEDLE's scholar shape (objects, not JSON strings; both load)."""
    published = paper.published.date().isoformat()
    provenance: ScholarProvenance = {"suite": paper.suite, "title": paper.title,
                                     "url": paper.url, "published_date": published}
    if bucket in LLM_BUCKETS:
        provenance["llm_model"] = model
        provenance["prompt_version"] = PROMPT_VERSION
    origin: ScholarOrigin = {"bucket": bucket, "suite": paper.suite, "provenance": provenance}
    gold: ScholarGoldRecord = {
        "paper_key": paper.key, "ids": paper.ids, "published_date": published,
        "age_bucket": age_bucket(paper.published, options.now), "domain": paper.domain}
    return generation.gold_row(text, options.now, source=SOURCE, origin=origin, gold=gold,
                               produced_at=options.now.isoformat())


async def generate(options: Options, sources: Sources, llm: AsyncChatClient | None, *,
                   stream: TextIO | None = None) -> tuple[list[ScholarRow], Tally]:
    """Gold rows for ``options`` from ``sources`` (and ``llm`` for body/clue/tot)."""
    if options.llm_buckets and llm is None:
        raise ValueError(f"buckets {', '.join(options.llm_buckets)} need the generation LLM")
    cells = _cells(options)
    tally = Tally(sources)
    listed = await asyncio.gather(*(_cell_candidates(c, sources, options, tally)
                                    for c in cells))
    screened = await _with_pmids(_screen(cells, listed, tally), sources.ncbi, tally)
    slots = asyncio.Semaphore(options.concurrency)

    async def attempt(paper: Paper) -> dict[str, str] | None:
        async with slots:
            return await _llm_queries(paper, sources, llm, options, tally)

    progress = Progress("needle scholar generate", len(cells) * options.per_cell,
                        stream=stream)
    kept = await asyncio.gather(*(_fill_cell(c, screened[c], attempt, options, tally, progress)
                                  for c in cells))
    progress.close()
    model = llm.config.name if llm is not None else None
    rows: list[ScholarRow] = []
    seen: set[str] = set()
    for cell_papers in kept:
        for paper, queries in cell_papers:
            tally.papers += 1
            texts = {"title": degrade_title(paper.title) or "", **queries}
            for bucket in options.buckets:
                row = gold_row(paper, bucket, texts[bucket], options=options, model=model)
                if row["query_id"] not in seen:
                    seen.add(row["query_id"])
                    rows.append(row)
                    tally.rows[bucket] += 1
    return rows, tally
