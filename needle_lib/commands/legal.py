"""`needle legal generate`: gold rows for the legal known-item benchmark.

Suites: caselaw (recent published federal appellate and Supreme Court opinions from
CourtListener, found again by their caption) and code (eCFR sections, found again by an
LLM-written query about their substance). caselaw needs a CourtListener API token
(COURTLISTENER_API_TOKEN) and is skipped with a note without one; code needs the generation
LLM (OPENROUTER_API_KEY, or NEEDLE_LLM_MODEL / NEEDLE_LLM_BASE_URL for another server) and
is skipped with a note without one. NEEDLE_CONTACT (your email) goes into the User-Agent.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from datetime import datetime

from needle_lib.argtypes import positive_int
from needle_lib.benches.legal.caption import COURT_PHRASES, DEFAULT_COURTS
from needle_lib.benches.legal.generate import (
    DEFAULT_TITLES,
    SUITES,
    LegalRow,
    Options,
    Tally,
    generate,
)
from needle_lib.benches.legal.sources import (
    TOKEN_ENV,
    CourtListenerClient,
    EcfrClient,
    MissingToken,
)
from needle_lib.commands.generation import (
    add_generate_parser,
    close_clients,
    csv_choices,
    generation_llm_or_none,
    run_generation,
)
from needle_lib.net.sources import SourceClient
from needle_lib.tomlconf import ConfigError

PROG = "needle legal generate"
CFR_TITLES = range(1, 51)


def cfr_titles(text: str) -> tuple[int, ...]:
    """An argparse ``type``: comma-separated CFR title numbers (1-50), order kept."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in values if not (v.isdigit() and int(v) in CFR_TITLES)]
    if unknown or not values:
        what = f"unknown title(s) {', '.join(unknown)}" if unknown else "no title given"
        raise argparse.ArgumentTypeError(f"{what}; known: CFR titles 1-50")
    return tuple(dict.fromkeys(int(v) for v in values))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_generate_parser(subparsers, "legal",
                                 help="legal known-item gold (CourtListener, eCFR)",
                                 description=__doc__)
    parser.add_argument("--suites", type=csv_choices(SUITES), default=SUITES, metavar="LIST",
                        help=f"comma-separated suites (default: {','.join(SUITES)})")
    parser.add_argument("--courts", type=csv_choices(tuple(COURT_PHRASES)),
                        default=DEFAULT_COURTS, metavar="LIST",
                        help=f"caselaw: CourtListener court ids (default: the 14 federal "
                             f"courts {','.join(DEFAULT_COURTS)}; also known: "
                             f"{','.join(c for c in COURT_PHRASES if c not in DEFAULT_COURTS)})")
    parser.add_argument("--months-back", type=positive_int, default=18, metavar="N",
                        help="caselaw: opinions filed in the last N full calendar months "
                             "(default: 18)")
    parser.add_argument("--per-court", type=positive_int, default=4, metavar="N",
                        help="caselaw: cases per court (default: 4)")
    parser.add_argument("--titles", type=cfr_titles, default=DEFAULT_TITLES, metavar="LIST",
                        help="code: CFR title numbers (default: "
                             f"{','.join(map(str, DEFAULT_TITLES))})")
    parser.add_argument("--per-title", type=positive_int, default=4, metavar="N",
                        help="code: sections per title (default: 4)")
    parser.set_defaults(func=run)


def _courtlistener_or_none(env: dict[str, str]) -> CourtListenerClient | None:
    try:
        return CourtListenerClient(env=env)
    except MissingToken:
        print(f"{PROG}: caselaw skipped: set {TOKEN_ENV} (CourtListener's search API "
              "answers only to a token; a free account has one)", file=sys.stderr)
        return None


async def _generate(options: Options, env: dict[str, str]) -> tuple[list[LegalRow], Tally]:
    suites = list(options.suites)
    courtlistener = _courtlistener_or_none(env) if "caselaw" in suites else None
    if courtlistener is None and "caselaw" in suites:
        suites.remove("caselaw")
    llm = generation_llm_or_none(PROG, "code") if "code" in suites else None
    if llm is None and "code" in suites:
        suites.remove("code")
    ecfr = EcfrClient(env=env) if "code" in suites else None
    clients: list[SourceClient] = [c for c in (courtlistener, ecfr) if c is not None]
    try:
        if not suites:
            raise ConfigError("legal generate: no suite left to generate (see the lines above)")
        tally = Tally(clients, stream=sys.stderr)
        rows = await generate(replace(options, suites=tuple(suites)),
                              courtlistener=courtlistener, ecfr=ecfr, llm=llm, tally=tally)
    finally:
        await close_clients(clients, llm)
    return rows, tally


def run(args: argparse.Namespace) -> int:
    def options(now: datetime, seed: int) -> Options:
        return Options(now=now, suites=args.suites, courts=args.courts,
                       months_back=args.months_back, per_court=args.per_court,
                       titles=args.titles, per_title=args.per_title, seed=seed)

    return run_generation(PROG, args, options, _generate, counts=_suite_syntax_counts)


def _suite_syntax_counts(rows: list[LegalRow]) -> dict[str, int]:
    counts = Counter(f"{row['query_origin']['suite']}/{row['query_origin']['syntax']}"
                     for row in rows)
    return dict(sorted(counts.items()))
