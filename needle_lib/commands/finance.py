"""`needle finance generate`: gold rows for the finance known-item benchmark.

Suites: finance (registry facts from Wikidata, GLEIF and SEC), filings (single-quarter 10-Q
figures from SEC XBRL) and filingdoc (recent filings found again by an LLM-written query).
finance and filings need no API key; filingdoc needs the generation LLM
(OPENROUTER_API_KEY, or NEEDLE_LLM_MODEL / NEEDLE_LLM_BASE_URL for another server) and is
skipped with a note without one. SEC and Wikidata require NEEDLE_CONTACT (your email) in
the User-Agent.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from datetime import datetime

from needle_lib.argtypes import positive_int
from needle_lib.benches.finance.companies import CompanyOrderError
from needle_lib.benches.finance.fields import DEFAULT_XBRL_FIELDS, XBRL_FIELDS
from needle_lib.benches.finance.generate import SUITES, FinanceRow, Options, Tally, generate
from needle_lib.benches.finance.sources import GleifClient, SecClient, WikidataClient
from needle_lib.commands.generation import (
    add_generate_parser,
    close_clients,
    csv_choices,
    generation_llm_or_none,
    run_generation,
)
from needle_lib.net.sources import SourceClient, SourceError
from needle_lib.tomlconf import ConfigError

PROG = "needle finance generate"


def register(subparsers: argparse._SubParsersAction) -> None:
    generate_parser = add_generate_parser(
        subparsers, "finance", help="finance known-item gold (SEC, Wikidata, GLEIF)",
        description=__doc__)
    generate_parser.add_argument(
        "--suites", type=csv_choices(SUITES), default=SUITES, metavar="LIST",
        help=f"comma-separated suites (default: {','.join(SUITES)})")
    generate_parser.add_argument(
        "--max-companies", type=positive_int, default=100, metavar="N",
        help="finance: the first N companies; filings/filingdoc: N/3 per cap tier "
             "(default: 100)")
    generate_parser.add_argument(
        "--per-company", type=positive_int, default=1, metavar="N",
        help="filings: quarter figures per company (default: 1)")
    generate_parser.add_argument(
        "--filingdoc-target", type=positive_int, default=40, metavar="N",
        help="filingdoc: rows wanted (up to 3N companies are tried; default: 40)")
    generate_parser.add_argument(
        "--fields", type=csv_choices(tuple(XBRL_FIELDS)),
        default=DEFAULT_XBRL_FIELDS, metavar="LIST",
        help=f"filings: XBRL fields (default: {','.join(DEFAULT_XBRL_FIELDS)}; "
             f"known: {','.join(XBRL_FIELDS)})")
    generate_parser.add_argument(
        "--min-employee-year", type=int, default=None, metavar="YEAR",
        help="finance: ask about a head count only if dated this year or later "
             "(default: last year)")
    generate_parser.set_defaults(func=run)


async def _generate(options: Options, env: dict[str, str]) -> tuple[list[FinanceRow], Tally]:
    suites = list(options.suites)
    # Clients first: a missing NEEDLE_CONTACT is an error before any request is made.
    sec = SecClient(env=env)
    clients: list[SourceClient] = [sec]
    wikidata = gleif = None
    if "finance" in suites:
        wikidata, gleif = WikidataClient(env=env), GleifClient(env=env)
        clients += [wikidata, gleif]
    llm = generation_llm_or_none(PROG, "filingdoc") if "filingdoc" in suites else None
    if "filingdoc" in suites and llm is None:
        suites.remove("filingdoc")
    if not suites:
        raise ConfigError("finance generate: no suite left to generate (filingdoc needs the "
                          "generation LLM; add finance or filings to --suites)")
    tally = Tally(clients, stream=sys.stderr)
    try:
        rows = await generate(replace(options, suites=tuple(suites)), sec=sec,
                              wikidata=wikidata, gleif=gleif, llm=llm, tally=tally)
    finally:
        await close_clients(clients, llm)
    return rows, tally


def run(args: argparse.Namespace) -> int:
    def options(now: datetime, seed: int) -> Options:
        return Options(now=now, suites=args.suites, max_companies=args.max_companies,
                       per_company=args.per_company, filingdoc_target=args.filingdoc_target,
                       fields=args.fields, seed=seed,
                       min_employee_year=args.min_employee_year)

    return run_generation(PROG, args, options, _generate, counts=_bucket_counts,
                          fatal=(SourceError, CompanyOrderError))


def _bucket_counts(rows: list[FinanceRow]) -> Counter[str]:
    return Counter(row["query_origin"]["bucket"] for row in rows)
