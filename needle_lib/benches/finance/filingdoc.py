"""Known-item filing queries (suite ``filingdoc``): the prompt, and the checks on the answer.

An LLM reads an excerpt of one filing and writes the query a person would type to find that
filing. The answer is only trusted after checks, because a known-item query is worthless if
its anchor is invented or if it gives the answer away:

- exactly one double-quoted span of 2–8 words, found verbatim in the document (quotes,
  dashes, case and spacing normalised): the query is grounded in this filing's own words;
- no accession number (the gold itself) and no URL;
- the company named outside the quotes, 3–16 words in all.

About half the rows then carry search syntax (``"quoted"``, ``site:sec.gov``,
``after:``/``before:`` around the filing date) so engines' operator support is measured too.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta

from needle_lib.benches.finance.sources import Company, Filing

PROMPT_VERSION = "filingdoc-1"
REFUSAL = "NO_DISTINCT_QUERY"
MIN_DOCUMENT_CHARS = 3000  # shorter primary documents are cover pages and exhibit indexes
EXCERPT_START, EXCERPT_CHARS = 1500, 8000  # past the cover page, within a cheap prompt
MIN_WORDS, MAX_WORDS = 3, 16
MIN_SPAN_WORDS, MAX_SPAN_WORDS = 2, 8
SYNTAX_CYCLE = ("plain", "site", "plain", "quoted", "plain", "date")
SITE = "sec.gov"
DATE_WINDOW = timedelta(days=45)

_ACCESSION = re.compile(r"\d{10}-?\d{2}-?\d{6}")
_URL = re.compile(r"https?://|www\.", re.I)
_SPAN = re.compile(r'"([^"]*)"')
_TRANSLATE = str.maketrans({
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u201a": "'",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
})

SYSTEM = (
    "You write web search queries that lead to one specific SEC filing and no other. "
    "You answer with the query alone."
)
INSTRUCTIONS = """\
Company: {company}
Filing: {form} filed {filed}

Excerpt of the filing:
<<<
{excerpt}
>>>

Write one keyword query (4 to 10 words) that someone who read this filing would type to
find it again. Build it on a detail that only this filing is likely to contain: a named
transaction or counterparty, a facility, a product, a lawsuit, an executive appointment or
departure, an unusual amount.
- Name the company, outside the quotes.
- Put exactly one phrase of 2 to 6 words in double quotes, copied character for character
  from the excerpt. Not boilerplate that every filing contains (no "forward-looking
  statements", "pursuant to the requirements", "incorporated by reference").
- No accession numbers, CIK or file numbers, and no URLs.
Reply with the query on a single line and nothing else. If the excerpt holds nothing but
boilerplate, reply exactly {refusal}."""


def excerpt(text: str) -> str:
    """What the LLM reads: past the cover page, or the end of a short document."""
    if len(text) <= EXCERPT_START + EXCERPT_CHARS:
        return text[-EXCERPT_CHARS:]
    return text[EXCERPT_START:EXCERPT_START + EXCERPT_CHARS]


def prompt_messages(company: Company, filing: Filing, text: str) -> list[dict[str, str]]:
    user = INSTRUCTIONS.format(company=company.title, form=filing.form, filed=filing.filed,
                               excerpt=excerpt(text), refusal=REFUSAL)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def normalise(text: str) -> str:
    """Compatibility forms folded (no-break spaces, ligatures), typographic quotes and dashes
    made plain, lowercased, whitespace collapsed: how span and document are compared."""
    folded = unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
    return " ".join(folded.lower().split())


def read_reply(content: str) -> str | None:
    """The candidate query in an LLM answer: its first non-empty line, typographic quotes
    made plain. None is a refusal (the sentinel, or nothing at all)."""
    line = next((ln.strip().strip("`").strip() for ln in content.splitlines()
                 if ln.strip().strip("`").strip()), "")  # skip Markdown code fences
    if line.lower().startswith("query:"):
        line = line[len("query:"):].strip()
    line = " ".join(line.translate(_TRANSLATE).split())
    if not line or REFUSAL in line.upper():
        return None
    return line


def rejection(query: str, *, text: str, company: Company) -> str | None:
    """Why ``query`` cannot be a gold query for the document ``text``; None if it can."""
    words = query.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return f"{len(words)} words (want {MIN_WORDS}-{MAX_WORDS})"
    if _ACCESSION.search(query):
        return "leaks an accession number"
    if _URL.search(query):
        return "contains a URL"
    spans = _SPAN.findall(query)
    if len(spans) != 1 or query.count('"') != 2:
        return f"{query.count(chr(34))} double quotes (want exactly one quoted span)"
    span = spans[0]
    span_words = len(span.split())
    if not MIN_SPAN_WORDS <= span_words <= MAX_SPAN_WORDS:
        return f"quoted span of {span_words} words (want {MIN_SPAN_WORDS}-{MAX_SPAN_WORDS})"
    if normalise(span) not in normalise(text):
        return f"quoted span {span!r} is not in the document"
    outside = normalise(_SPAN.sub(" ", query))
    anchor = re.split(r"[^0-9a-z]+", normalise(company.name))
    first = next((token for token in anchor if token), "")
    if first and not re.search(rf"(?<![0-9a-z]){re.escape(first)}(?![0-9a-z])", outside):
        return f"does not name the company ({first!r}) outside the quotes"
    return None


def with_syntax(query: str, syntax: str, filed: str) -> str:
    """The query as sent for a syntax: ``quoted`` keeps the span's quotes, every other
    syntax drops them; ``site`` and ``date`` append their operator."""
    if syntax == "quoted":
        return query
    bare = " ".join(query.replace('"', " ").split())
    if syntax == "site":
        return f"{bare} site:{SITE}"
    if syntax == "date":
        day = date.fromisoformat(filed)
        return f"{bare} after:{day - DATE_WINDOW} before:{day + DATE_WINDOW}"
    return bare
