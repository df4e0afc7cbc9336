"""Finance gold generation: source clients (and an LLM) in, gold rows out.

Three suites, one coroutine each, all pure over their inputs, so tests hand them loopback
fakes and a scheduler can drive them:

- ``finance``: registry facts per company (Wikidata; the LEI from GLEIF when Wikidata has
  none; the ticker from SEC), each asked as a keyword query and, where a template exists,
  a natural-language one (bucket ``finance_nl``). A company with fewer than 4 facts is
  dropped: a thin or wrongly resolved entity would mostly yield noise.
- ``filings``: single-quarter 10-Q figures from XBRL company facts.
- ``filingdoc``: one recent filing per company, found again by an LLM-written query.

Same seed and same source answers, same rows (the LLM aside): companies and facts are drawn
with seeded permutations, work runs concurrently but results are kept in input order, and
syntax cycles are applied afterwards. A fetch that fails for one company drops that
company (counted) and never the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import cycle
from typing import TypeAlias, TypedDict, TypeVar

from needle_lib.benches import generation
from needle_lib.benches.finance import claims as wd
from needle_lib.benches.finance import filingdoc
from needle_lib.benches.finance.companies import (
    TIERS,
    Tier,
    check_market_cap_order,
    distinct_companies,
    permutation,
    tiered_companies,
)
from needle_lib.benches.finance.document import html_to_text
from needle_lib.benches.finance.fields import (
    DEFAULT_XBRL_FIELDS,
    REGISTRY_FIELDS,
    XBRL_FIELDS,
    field_spec,
)
from needle_lib.benches.finance.sources import (
    Company,
    Filing,
    GleifClient,
    Label,
    SecClient,
    WikidataClient,
)
from needle_lib.benches.finance.xbrl import QuarterFact, quarter_facts
from needle_lib.benches.generation import GoldRow, Stamp
from needle_lib.benches.rows import dedupe_rows
from needle_lib.llm import AsyncChatClient, LLMError
from needle_lib.net.domains import registrable_domain
from needle_lib.net.sources import SourceError

SUITES = ("finance", "filings", "filingdoc")
PRODUCER = "needle finance"
MIN_FACTS = 4
FILING_FORMS = ("10-K", "10-Q", "8-K")
RECENT_FILINGS = 20
QUARTERS_BACK = 6
RECENT_PERIOD_DAYS = 200  # a quarter that ended within ~6 months counts as "recent"
CANDIDATES_PER_TARGET = 3  # filingdoc: companies tried per wanted row (drops are common)
FILINGDOC_SALT = 0xF111
FILINGS_SYNTAX = ("plain", "quoted")

#: Why a company or candidate yielded no row, in the order the summary line lists them.
DROP_REASONS = {
    "no_facts": "no facts",
    "thin_document": "thin document",
    "llm_refusals": "LLM refusals",
    "llm_errors": "LLM errors",
    "rejected_queries": "rejected queries",
    "fetch_errors": "fetch errors",
    "surplus": "surplus",
}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Options:
    """What to generate. ``now`` stamps rows (hour, production time) and dates "recent"."""

    now: datetime
    suites: tuple[str, ...] = SUITES
    max_companies: int = 100
    per_company: int = 1
    filingdoc_target: int = 40
    fields: tuple[str, ...] = DEFAULT_XBRL_FIELDS
    seed: int = 0
    min_employee_year: int | None = None  # default: last year
    tiers: tuple[Tier, ...] = TIERS
    concurrency: int = 8

    @property
    def employee_year(self) -> int:
        return self.min_employee_year if self.min_employee_year is not None \
            else self.now.year - 1


class Tally(generation.Tally):
    """Finance drop counts (see ``DROP_REASONS``) and its progress line."""

    reasons = DROP_REASONS


#: A fact's value as gold holds it: a name, a year or count, or an XBRL amount.
FactValue: TypeAlias = str | int | float


@dataclass(frozen=True)
class Fact:
    field: str
    value: FactValue
    aliases: tuple[str, ...]
    registry: str
    source_url: str


async def _bounded(items: Sequence[T], work: Callable[[T], Awaitable[R]], limit: int
                   ) -> list[R]:
    """``work`` over ``items`` with at most ``limit`` running; results in input order."""
    slots = asyncio.Semaphore(max(1, limit))

    async def one(item: T) -> R:
        async with slots:
            return await work(item)

    return list(await asyncio.gather(*(one(item) for item in items)))


def _aliases(value: FactValue, aliases: Iterable[str]) -> list[str]:
    seen = {str(value).casefold()}
    kept = []
    for alias in aliases:
        if alias and alias.casefold() not in seen:
            seen.add(alias.casefold())
            kept.append(alias)
    return kept


class ProvenanceExtra(TypedDict, total=False):
    """What a suite adds to a row's provenance: the Wikidata item (``finance``), the
    quarter (``filings``), the filing and the LLM that wrote the query (``filingdoc``)."""

    qid: str | None
    fy: int
    fp: str
    period_end: str
    age_bucket: str
    form: str
    filed: str
    llm_model: str
    prompt_version: str


class FinanceProvenance(ProvenanceExtra):
    producer: str
    registry: str
    source_url: str
    entity: str
    ticker: str
    cik: int


class FinanceOrigin(TypedDict):
    bucket: str
    syntax: str
    topical_domain: str
    subcategory: str
    provenance: FinanceProvenance


class FinanceGoldRecord(TypedDict):
    """A finance row's ``gold`` (``match.FinanceGold.from_row`` reads it)."""

    field: str
    field_type: str
    value: FactValue
    aliases: list[str]
    freshness_window: str
    tier: str


#: A row ``needle finance generate`` writes (NEEDLE's finance row format).
FinanceRow: TypeAlias = GoldRow[FinanceOrigin, FinanceGoldRecord]


def gold_row(stamp: Stamp, company: Company, *, text: str, bucket: str, syntax: str,
             fact: Fact, extra: ProvenanceExtra | None = None) -> FinanceRow:
    """One gold row in the NEEDLE finance row format (``query_origin``/``gold`` objects)."""
    spec = field_spec(fact.field)
    origin: FinanceOrigin = {
        "bucket": bucket,
        "syntax": syntax,
        "topical_domain": "finance",
        "subcategory": f"{bucket}_{fact.field}",
        "provenance": {
            "producer": PRODUCER,
            "registry": fact.registry,
            "source_url": fact.source_url,
            "entity": company.title,
            "ticker": company.ticker,
            "cik": company.cik,
            **(extra or ProvenanceExtra()),
        },
    }
    gold: FinanceGoldRecord = {
        "field": fact.field,
        "field_type": spec.field_type,
        "value": fact.value,
        "aliases": _aliases(fact.value, fact.aliases),
        "freshness_window": spec.freshness,
        "tier": company.tier,
    }
    return stamp.gold_row(text, source="finance", origin=origin, gold=gold,
                          extra={"topical_domain": "finance"})


# --- finance: registry facts -------------------------------------------------------------

async def _resolve(wikidata: WikidataClient, company: Company) -> str | None:
    """The first search hit that is a company (a bank's namesake town is not the bank)."""
    for qid in await wikidata.search(company.search_title):
        if wd.is_company(await wikidata.claims(qid)):
            return qid
    return None


async def _hq_country(wikidata: WikidataClient, claims: wd.Claims) -> str | None:
    """The country of the headquarters location (P159 → P17); else the company's own
    country (P17), which is often where it is incorporated rather than run from."""
    location = wd.first_entity(claims, wd.HEADQUARTERS)
    if location is not None:
        country = wd.first_entity(await wikidata.claims(location), wd.COUNTRY)
        if country is not None:
            return country
    return wd.first_entity(claims, wd.COUNTRY)


async def _wikidata_facts(wikidata: WikidataClient, qid: str, min_employee_year: int
                          ) -> tuple[list[Fact], Label | None]:
    """Facts from the company's Wikidata item, and the CEO's label (for templates)."""
    claims = await wikidata.claims(qid)
    ceo = wd.current_ceo(claims)
    country = await _hq_country(wikidata, claims)
    labels = await wikidata.labels([qid, ceo.qid if ceo else "", country or ""])
    url = WikidataClient.public_url(qid)

    def fact(name: str, value: FactValue, aliases: Iterable[str] = ()) -> Fact:
        return Fact(name, value, tuple(aliases), "wikidata", url)

    facts = []
    ceo_label = labels.get(ceo.qid) if ceo else None
    if ceo and ceo_label:
        facts.append(fact("ceo", ceo_label.label, ceo_label.aliases))
        if ceo.since:
            facts.append(fact("ceo_since", ceo.since))
        if qid in labels:
            facts.append(fact("ceo_company", labels[qid].label, labels[qid].aliases))
    founded = wd.founded_year(claims)
    if founded:
        facts.append(fact("founded_year", founded))
    if country in labels:
        facts.append(fact("hq_country", labels[country].label, labels[country].aliases))
    site = wd.website(claims)
    domain = registrable_domain(site) if site else None
    if site and domain:
        facts.append(fact("website", domain, [site]))
    head_count = wd.employees(claims)
    if head_count and head_count[1] and head_count[1] >= min_employee_year:
        facts.append(fact("employees", head_count[0]))
    lei = wd.lei(claims)
    if lei:
        facts.append(fact("lei", lei))
    return facts, ceo_label


async def _company_rows(company: Company, *, wikidata: WikidataClient,
                        gleif: GleifClient | None, stamp: Stamp, min_employee_year: int,
                        tally: Tally) -> list[FinanceRow]:
    qid = await _resolve(wikidata, company)
    facts, ceo = (await _wikidata_facts(wikidata, qid, min_employee_year)
                  if qid else ([], None))
    if len(company.ticker) >= 2:  # a one-letter ticker ("F", "T") is found on any page
        facts.append(Fact("ticker", company.ticker, (), "sec", SecClient.public_url(
            f"/cgi-bin/browse-edgar?action=getcompany&CIK={company.cik}")))
    has_lei = any(f.field == "lei" for f in facts)
    # GLEIF allows one request a second: ask only when the LEI decides whether the company
    # is kept or adds to a company that is kept anyway, never for a sure drop.
    if gleif is not None and not has_lei and len(facts) + 1 >= MIN_FACTS:
        try:
            lei = await gleif.lei_by_legal_name(company.search_title)
        except SourceError:  # the Wikidata facts stand on their own; count the failure
            tally.drop("fetch_errors")
            lei = None
        if lei:
            facts.append(Fact("lei", lei, (), "gleif", GleifClient.public_url(lei)))
    if len(facts) < MIN_FACTS:
        tally.drop("no_facts")
        return []
    order = list(REGISTRY_FIELDS)
    facts.sort(key=lambda f: order.index(f.field))
    names = {"name": company.name, "ceo": ceo.label.lower() if ceo else ""}
    rows = []
    for fact in facts:
        spec = REGISTRY_FIELDS[fact.field]
        variants = [("finance", spec.keyword)] + ([("finance_nl", spec.natural)]
                                                  if spec.natural else [])
        for bucket, template in variants:
            rows.append(gold_row(stamp, company, text=template.format(**names), bucket=bucket,
                                 syntax="plain", fact=fact, extra={"qid": qid}))
    return rows


async def _each_company(companies: Sequence[Company], work: Callable[[Company], Awaitable[R]],
                        empty: R, *, tally: Tally, limit: int) -> list[R]:
    """``work`` per company, bounded; a failed fetch drops that company, not the run."""

    async def guarded(company: Company) -> R:
        try:
            return await work(company)
        except SourceError:
            tally.drop("fetch_errors")
            return empty
        finally:
            tally.advance()

    return await _bounded(companies, guarded, limit)


async def generate_finance(companies: Sequence[Company], *, wikidata: WikidataClient,
                           gleif: GleifClient | None, stamp: Stamp, min_employee_year: int,
                           tally: Tally, concurrency: int = 8) -> list[FinanceRow]:
    """Suite ``finance``: registry facts as keyword and natural-language queries."""
    tally.stage("finance companies", len(companies))

    async def work(company: Company) -> list[FinanceRow]:
        return await _company_rows(company, wikidata=wikidata, gleif=gleif, stamp=stamp,
                                   min_employee_year=min_employee_year, tally=tally)

    none: list[FinanceRow] = []
    per_company = await _each_company(companies, work, none, tally=tally, limit=concurrency)
    return [row for rows in per_company for row in rows]


# --- filings: single-quarter XBRL facts --------------------------------------------------

def _age_bucket(end: str, today: date) -> str:
    return "recent" if (today - date.fromisoformat(end)).days <= RECENT_PERIOD_DAYS \
        else "older"


async def generate_filings(companies: Sequence[Company], *, sec: SecClient,
                           fields: Sequence[str], per_company: int, seed: int, stamp: Stamp,
                           tally: Tally, concurrency: int = 8) -> list[FinanceRow]:
    """Suite ``filings``: ``per_company`` quarter figures per company (seeded draw among its
    last six quarters × fields), names plain and ``"quoted"`` in turn."""
    tally.stage("filings companies", len(companies))

    async def work(company: Company) -> list[QuarterFact]:
        gaap = await sec.company_facts(company.cik)
        candidates = [fact for name in fields for fact in quarter_facts(gaap, name,
                                                                        QUARTERS_BACK)]
        if not candidates:
            tally.drop("no_facts")
            return []
        return [candidates[i] for i in permutation(len(candidates), seed ^ company.cik)
                [:per_company]]

    no_facts: list[QuarterFact] = []
    drawn = await _each_company(companies, work, no_facts, tally=tally, limit=concurrency)
    syntaxes = cycle(FILINGS_SYNTAX)
    rows = []
    for company, facts in zip(companies, drawn, strict=True):
        url = SecClient.public_url(SecClient.facts_path(company.cik), data=True)
        for quarter in facts:
            syntax = next(syntaxes)
            name = f'"{company.name}"' if syntax == "quoted" else company.name
            text = f"{name} {quarter.quarter} {XBRL_FIELDS[quarter.field].phrase}"
            fact = Fact(quarter.field, quarter.value, (), "sec_xbrl", url)
            rows.append(gold_row(stamp, company, text=text, bucket="filings", syntax=syntax,
                                 fact=fact, extra={
                                     "fy": quarter.fy, "fp": quarter.fp,
                                     "period_end": quarter.end,
                                     "age_bucket": _age_bucket(quarter.end, stamp.now.date()),
                                 }))
    return rows


# --- filingdoc: known-item filing retrieval ----------------------------------------------

@dataclass(frozen=True)
class _Projected:
    company: Company
    filing: Filing
    query: str


async def _project(company: Company, *, sec: SecClient, llm: AsyncChatClient, seed: int,
                   tally: Tally) -> _Projected | None:
    """One filing of ``company`` and the checked LLM query for it; None (counted) if not."""
    filings = await sec.recent_filings(company.cik, FILING_FORMS, RECENT_FILINGS)
    if not filings:
        tally.drop("no_facts")
        return None
    filing = filings[(seed ^ company.cik) % len(filings)]
    # A 10-K runs to megabytes of HTML: parse it off the event loop so fetches keep going.
    text = await asyncio.to_thread(html_to_text, await sec.document(filing))
    if len(text) < filingdoc.MIN_DOCUMENT_CHARS:
        tally.drop("thin_document")
        return None
    tally.llm_calls += 1
    try:
        answer = await llm.complete(filingdoc.prompt_messages(company, filing, text))
    except LLMError:
        tally.drop("llm_errors")
        return None
    if answer.finish_reason == "length":  # cut off: whatever is there is not a whole query
        tally.drop("llm_errors")
        return None
    query = filingdoc.read_reply(answer.content)
    if query is None:
        tally.drop("llm_refusals")
        return None
    if filingdoc.rejection(query, text=text, company=company) is not None:
        tally.drop("rejected_queries")
        return None
    return _Projected(company, filing, query)


async def generate_filingdoc(companies: Sequence[Company], *, sec: SecClient,
                             llm: AsyncChatClient, target: int, seed: int, stamp: Stamp,
                             tally: Tally, concurrency: int = 8) -> list[FinanceRow]:
    """Suite ``filingdoc``: up to ``target`` filings found again by an LLM-written query.

    Candidates (a seeded draw of ``target × 3`` companies) are worked through in chunks, in
    order, and the first ``target`` accepted are kept: the LLM is not asked about more
    filings than needed, and the kept rows do not depend on which request finished first.
    """
    order = permutation(len(companies), seed ^ FILINGDOC_SALT)
    candidates = [companies[i] for i in order[:target * CANDIDATES_PER_TARGET]]
    tally.stage("filingdoc candidates", len(candidates))

    async def work(company: Company) -> _Projected | None:
        return await _project(company, sec=sec, llm=llm, seed=seed, tally=tally)

    accepted: list[_Projected] = []
    step = max(1, concurrency)
    for start in range(0, len(candidates), step):
        if len(accepted) >= target:
            break
        chunk = candidates[start:start + step]
        for projected in await _each_company(chunk, work, None, tally=tally, limit=step):
            if projected is None:
                continue
            if len(accepted) < target:
                accepted.append(projected)
            else:
                tally.drop("surplus")
    rows = []
    model = llm.config.name
    for projected, syntax in zip(accepted, cycle(filingdoc.SYNTAX_CYCLE), strict=False):
        filing = projected.filing
        fact = Fact("filing", filing.accession_digits, (filing.accession,), "sec_submissions",
                    SecClient.public_url(filing.document_path))
        text = filingdoc.with_syntax(projected.query, syntax, filing.filed)
        rows.append(gold_row(stamp, projected.company, text=text, bucket="filingdoc",
                             syntax=syntax, fact=fact, extra={
                                 "form": filing.form, "filed": filing.filed,
                                 "llm_model": model,
                                 "prompt_version": filingdoc.PROMPT_VERSION,
                             }))
    return rows


# --- all suites --------------------------------------------------------------------------

async def generate(options: Options, *, sec: SecClient, wikidata: WikidataClient | None = None,
                   gleif: GleifClient | None = None, llm: AsyncChatClient | None = None,
                   tally: Tally | None = None) -> list[FinanceRow]:
    """Every requested suite, in the order finance, filings, filingdoc; rows deduplicated."""
    unknown = [s for s in options.suites if s not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
    if "finance" in options.suites and wikidata is None:
        raise ValueError("suite 'finance' needs a Wikidata client")
    if "filingdoc" in options.suites and llm is None:
        raise ValueError("suite 'filingdoc' needs an LLM client")
    tally = tally if tally is not None else Tally()
    stamp = Stamp(options.now)
    listed = await sec.company_tickers()
    rows: list[FinanceRow] = []
    try:
        if "finance" in options.suites:
            assert wikidata is not None
            rows += await generate_finance(
                distinct_companies(listed, options.max_companies), wikidata=wikidata,
                gleif=gleif, stamp=stamp, min_employee_year=options.employee_year,
                tally=tally, concurrency=options.concurrency)
        tiered: list[Company] = []
        if "filings" in options.suites or "filingdoc" in options.suites:
            check_market_cap_order(listed)
            tiered = tiered_companies(listed, max(1, options.max_companies // 3), options.seed,
                                      options.tiers)
        if "filings" in options.suites:
            rows += await generate_filings(
                tiered, sec=sec, fields=options.fields, per_company=options.per_company,
                seed=options.seed, stamp=stamp, tally=tally, concurrency=options.concurrency)
        if "filingdoc" in options.suites:
            assert llm is not None
            rows += await generate_filingdoc(
                tiered, sec=sec, llm=llm, target=options.filingdoc_target, seed=options.seed,
                stamp=stamp, tally=tally, concurrency=options.concurrency)
    finally:
        tally.close()
    return dedupe_rows(rows)
