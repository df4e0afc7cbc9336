"""Code queries: an LLM reads one CFR section and writes a search for its substance.

The query must find the section by what it says, never by its number: a query carrying
"17 CFR 240.10b-5" or "rule 10b-5" is a citation lookup, which every engine passes. So the
answer is only trusted after checks:

- 3 to 16 words, with exactly one double-quoted phrase of 2–8 words copied from the section
  text (normalised comparison): the query is grounded in this section's own words;
- no citation forms: "CFR", "U.S.C.", "§", "section 5", "part 240", "title 17";
- none of the section's numbers as a standalone token: the full section (``240.10b-5``),
  its part (``240``) or the part after the dot (``10b-5``).

Rows then cycle through plain (quotes dropped), quoted (as written), plain, and site
(``site:law.cornell.edu``, quotes dropped): half carry operator syntax.
"""

from __future__ import annotations

import re

from needle_lib.benches.legal.sources import Section
from needle_lib.benches.projection import span_problem, unquoted

PROMPT_VERSION = "legal-code-1"
REFUSAL = "NO_DISTINCT_QUERY"
MIN_WORDS, MAX_WORDS = 3, 16
MIN_SPAN_WORDS, MAX_SPAN_WORDS = 2, 8
EXCERPT_CHARS = 6000
SYNTAX_CYCLE = ("plain", "quoted", "plain", "site")
SITE = "law.cornell.edu"

_CITATION_FORMS = re.compile(
    r"\bc\.?\s?f\.?\s?r\b|\bu\.?\s?s\.?\s?c\b|§|\b(?:section|part|title)\s+\d[\w.\-]*", re.I)

SYSTEM = (
    "You write web search queries that find one specific section of the US Code of Federal "
    "Regulations by what it says. You answer with the query alone."
)
INSTRUCTIONS = """\
Section heading: {heading}

Section text:
<<<
{text}
>>>

Write one keyword query (4 to 10 words) that someone who needs this rule would type: about
its substance (an obligation, a prohibition, a threshold, an exemption, a defined term).
- Put exactly one phrase of 2 to 6 words in double quotes, copied character for character
  from the section text. Not the heading, and not wording every regulation shares.
- Context words go outside the quotes.
- Never write the section, part or title number, "CFR", "USC", "§" or "section N".
Reply with the query on a single line and nothing else. If the section is purely
administrative or too generic to single out, reply exactly {refusal}."""


def prompt_messages(section: Section) -> list[dict[str, str]]:
    user = INSTRUCTIONS.format(heading=section.heading, text=section.text[:EXCERPT_CHARS],
                               refusal=REFUSAL)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def number_forms(identifier: str) -> set[str]:
    """The numbers that would cite the section: ``240.10b-5``, ``240``, ``10b-5``."""
    part, _, rest = identifier.partition(".")
    return {f for f in (identifier, part, rest) if f}


def rejection(query: str, section: Section) -> str | None:
    """Why ``query`` cannot be the gold query of ``section``; None if it can."""
    words = len(unquoted(query).split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        return f"{words} words (want {MIN_WORDS}-{MAX_WORDS})"
    leak = _CITATION_FORMS.search(query)
    if leak:
        return f"leaks the citation ({leak.group(0)!r})"
    for form in sorted(number_forms(section.ref.identifier), key=len, reverse=True):
        if re.search(rf"(?<![\w.]){re.escape(form)}(?!\w|\.\w)", query, re.I):
            return f"leaks the section number ({form!r})"
    return span_problem(query, section.text, min_words=MIN_SPAN_WORDS,
                        max_words=MAX_SPAN_WORDS)


def with_syntax(query: str, syntax: str) -> str:
    """The query as sent for a syntax of the cycle."""
    if syntax == "quoted":
        return query
    if syntax == "site":
        return f"{unquoted(query)} site:{SITE}"
    return unquoted(query)
