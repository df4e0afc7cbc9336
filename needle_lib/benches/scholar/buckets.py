"""The four queries per paper, and the checks that keep each one honest.

- ``title``: the title as people type it (lowercase, no LaTeX or punctuation); no LLM.
- ``body``: a 3–8 word keyword query on a detail of the full text that the title and abstract
  do not give away. Checked: at least two content words absent from title and abstract and
  present in the full text, and a quoted phrase (if any) verbatim in the full text and not in
  the abstract. A "body" query answerable from the abstract measures abstract retrieval.
- ``clue``: the same kind of facts as a natural-language question (no quotes).
- ``tot``: a hedged, half-remembered description. Names and exact values are what make a
  query easy, so they are banned and checked: no acronyms, CamelCase or letter-digit codes,
  no capitalised word from the title, abstract or author list, no decimals, percentages or
  long numbers, and at most two title words.

Every LLM query also loses its paper on a citation-style anchor (an author name, "et al",
"Table 2", an id or URL): those point at other documents or at the answer itself.
A paper is kept only when all requested buckets pass (paired retention, in ``generate``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from needle_lib.benches.scholar.papers import Paper

PROMPT_VERSION = "scholar-1"
REFUSAL = "NO_DISTINCT_QUERY"
LLM_BUCKETS = ("body", "clue", "tot")
BUCKETS = ("title", *LLM_BUCKETS)
ABSTRACT_CHARS = 1500
EXCERPT_CHARS = 6000
MAX_TOKENS = 1024

MIN_TITLE_WORDS = 4
WORDS = {"body": (3, 12), "clue": (8, 45), "tot": (12, 50)}
MIN_NOVEL_WORDS = 2
MAX_TOT_TITLE_WORDS = 2
SPAN_WORDS = (2, 8)

#: Function words and words every paper uses: they say nothing about which paper it is.
STOPWORDS = frozenset(re.findall(r"\S+", """
a about above after again against all also among an and any are around as at be been before
being below between both but by can could did do does doing during each few for from had
has have having here how however i if in into is it its itself just more most much no nor
not now of off on once only or other our out over own same she should so some such than
that the their them then there these they this those through to too under until up upon
very was we were what when where which while who whom why will with within without would
you your paper study work article approach approaches method methods result results
finding findings novel new based using via toward towards effect effects efficient
effective robust improved improving improve learning model models modeling modelling
analysis framework system systems data show shows shown propose proposed present presents
use used one two three first second large small high low different various several many
remember recall something someone think thing things kind sort maybe perhaps probably
"""))

_TOKEN = re.compile(r"[a-z0-9][a-z0-9-]*")
_LATEX = re.compile(r"\$[^$]*\$|\\[a-zA-Z]+\{([^}]*)\}|\\[a-zA-Z]+")
_NOT_TITLE_CHAR = re.compile(r"[^A-Za-z0-9\s-]")
_SPECIFIC_TITLE = re.compile(r"\d|[A-Z]{2,}|[a-z][A-Z]|[A-Za-z]{3,}-[A-Za-z]{3,}")
_MIN_SPECIFIC_CONTENT = 5

_BAD_ANCHORS = (
    (re.compile(r"\bet\.?\s+al\b", re.I), "cites 'et al'"),
    (re.compile(r"\b(?:table|figure|fig|section|sec|appendix|eq|equation|theorem|lemma"
                r"|corollary|proposition|algorithm)\s*\.?\s*\d", re.I),
     "points at a numbered table/figure/section"),
    (re.compile(r"\bsupplement(?:ary|al)\b", re.I), "points at supplementary material"),
    (re.compile(r"https?://|www\.|\bdoi\b|\b10\.\d{4,9}/|\barxiv\b|\bPMC\d|\bPMID\b", re.I),
     "carries a URL or an id"),
)
_PRECISE_VALUE = re.compile(r"\d+[.,]\d+|\d{4,}|\d+\s*(?:%|percent\b|per cent\b)", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_CODED = re.compile(r"[A-Z].*[A-Z]|[a-z][A-Z]|[A-Za-z].*\d|\d.*[A-Za-z]")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")
_SPAN = re.compile(r'"([^"]+)"')
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'",
                         "\u2019": "'"})


@dataclass(frozen=True)
class Rejection:
    """Why a query was refused: ``reason`` names the drop counter, ``detail`` shows it."""

    reason: str  # shape | bad_anchor | leak | ungrounded
    detail: str


def degrade_title(title: str) -> str | None:
    """``"SmoothQuant: Accurate $\\alpha$-Scaling"`` → ``"smoothquant accurate scaling"``;
    None for titles under four words (too short to be a query that names one paper)."""
    text = _LATEX.sub(lambda m: f" {m.group(1) or ''} ", title)
    words = _NOT_TITLE_CHAR.sub(" ", text).lower().split()
    words = [w.strip("-") for w in words if w.strip("-")]
    return " ".join(words) if len(words) >= MIN_TITLE_WORDS else None


def _ascii_fold(text: str) -> str:
    """``Poincaré`` → ``poincare``: the LLM and the paper may spell accents differently."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def content_tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(_ascii_fold(text)) if len(t) > 2 and t not in STOPWORDS}


def title_is_specific(title: str) -> bool:
    """Whether a title can name one paper: a code, acronym, number or hyphenated coinage,
    or at least five content words ("A Survey of Methods" names hundreds)."""
    return bool(_SPECIFIC_TITLE.search(title)) or \
        len(content_tokens(title)) >= _MIN_SPECIFIC_CONTENT


def excerpt(body: str) -> str:
    """What the LLM reads: past the first fifth (introductions restate the abstract)."""
    start = min(len(body) // 5, max(0, len(body) - EXCERPT_CHARS))
    return body[start:start + EXCERPT_CHARS]


_SYSTEM = ("You write the search queries researchers type to find one particular paper "
           "again. You answer with the query alone, on a single line.")
_TASKS = {
    "body": """\
Pick one detail of the full-text excerpt that belongs to this paper and that its title and
abstract do not mention: a named dataset, cohort, site, instrument, tool, protocol, strain or
material, or an unusual measured quantity. Write a keyword query of 3 to 8 words that finds
the paper through that detail, using words of the excerpt that are not in the title or
abstract. You may put one exact phrase of 3 to 6 words copied from the excerpt in double
quotes. No author names, no "et al.", no figure, table or section numbers, no URLs or ids,
no hyperparameter settings.""",
    "clue": """\
Write one question of 12 to 35 words, as someone would ask a search engine, that leads to
this paper through two or three precise facts of the full-text excerpt that the title and
abstract do not state. Plain words only: no quotation marks, no author names, no citations,
no figure or table numbers.""",
    "tot": """\
Write what someone who read this paper months ago and half remembers it would type into a
search engine: 15 to 40 words on the setting and the main finding, hedged ("I think",
"something like"). Blur every specific. No names of methods, datasets, places, people or
venues, no acronyms, no exact numbers (no decimals, percentages or counts), and at most two
words of the title.""",
}
_USER = """\
Query type: {bucket}

Title: {title}

Abstract: {abstract}

Full-text excerpt:
<<<
{excerpt}
>>>

{task}
If the paper gives you nothing to build this on, reply exactly {refusal}."""


def prompt_messages(bucket: str, paper: Paper, body: str) -> list[dict[str, str]]:
    user = _USER.format(bucket=bucket, title=paper.title,
                        abstract=paper.abstract[:ABSTRACT_CHARS], excerpt=excerpt(body),
                        task=_TASKS[bucket], refusal=REFUSAL)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def clean_answer(text: str) -> str | None:
    """The query in an LLM answer: its first non-empty line, unwrapped from enclosing quotes
    or backticks; None for the refusal sentinel or nothing at all."""
    lines = [line.strip() for line in text.translate(_QUOTES).splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[0].strip("`'").strip()
    if REFUSAL in line.upper():
        return None
    if len(line) >= 2 and line[0] == line[-1] == '"' and '"' not in line[1:-1]:
        line = line[1:-1].strip()
    if line.count('"') % 2:  # an unbalanced quote cannot be an exact-phrase operator
        line = line.replace('"', " ")
    return " ".join(line.split()) or None


def _folded(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = re.sub(r"[\u2010-\u2015]", "-", text)
    return " ".join(re.sub(r"[^\w\s-]", " ", text).split())


def _has(token: str, vocabulary: set[str]) -> bool:
    """Whether ``token`` or its singular/plural is in ``vocabulary``."""
    return (token in vocabulary or f"{token}s" in vocabulary or f"{token}es" in vocabulary
            or (token.endswith("s") and token[:-1] in vocabulary)
            or (token.endswith("es") and token[:-2] in vocabulary))


def _author_names(paper: Paper) -> set[str]:
    """Surnames and other name parts (≥ 3 letters) of the paper's authors."""
    return {part for author in paper.authors for part in re.findall(r"[^\W\d_]{3,}", author)}


def _bad_anchor(query: str, paper: Paper) -> Rejection | None:
    for pattern, what in _BAD_ANCHORS:
        found = pattern.search(query)
        if found:
            return Rejection("bad_anchor", f"{what}: {found.group(0)!r}")
    names = _author_names(paper)
    for word in _WORD.findall(query):
        if word in names:
            return Rejection("bad_anchor", f"names an author: {word!r}")
    return None


def _word_count(bucket: str, query: str) -> Rejection | None:
    low, high = WORDS[bucket]
    count = len(query.split())
    if not low <= count <= high:
        return Rejection("shape", f"{count} words (wanted {low}-{high})")
    return None


def _novel_and_grounded(query: str, paper: Paper, body: str) -> Rejection | None:
    """At least two content words not in title/abstract, and they come from the full text."""
    metadata = content_tokens(paper.title) | content_tokens(paper.abstract)
    novel = sorted(t for t in content_tokens(query) if not _has(t, metadata))
    if len(novel) < MIN_NOVEL_WORDS:
        return Rejection("leak", f"only {len(novel)} content word(s) not in title/abstract "
                                 f"({', '.join(novel) or 'none'})")
    vocabulary = content_tokens(body)
    grounded = [t for t in novel if _has(t, vocabulary)]
    if len(grounded) < MIN_NOVEL_WORDS:
        return Rejection("ungrounded", "new words not found in the full text: "
                                       f"{', '.join(t for t in novel if t not in grounded)}")
    return None


def _quoted_span(query: str, paper: Paper, body: str) -> Rejection | None:
    spans = _SPAN.findall(query)
    if len(spans) > 1:
        return Rejection("shape", f"{len(spans)} quoted phrases (at most one)")
    if not spans:
        return None
    span = _folded(spans[0])
    low, high = SPAN_WORDS
    if not low <= len(span.split()) <= high:
        return Rejection("shape", f"quoted phrase of {len(span.split())} words")
    if span not in _folded(body):
        return Rejection("ungrounded", f"quoted phrase not in the full text: {spans[0]!r}")
    if span in _folded(f"{paper.title} {paper.abstract}"):
        return Rejection("leak", f"quoted phrase is in the title/abstract: {spans[0]!r}")
    return None


def _sentence_initial(query: str, start: int) -> bool:
    return not query[:start].strip() or bool(_SENTENCE_END.search(query[:start]))


def _tot_names_or_values(query: str, paper: Paper) -> Rejection | None:
    value = _PRECISE_VALUE.search(query)
    if value:
        return Rejection("leak", f"exact value {value.group(0)!r}")
    own_words = {w.lower() for w in _WORD.findall(f"{paper.title} {paper.abstract}")}
    own_words |= {n.lower() for n in _author_names(paper)}
    for found in _WORD.finditer(query):
        word = found.group(0).strip("'-")
        if _CODED.search(word):
            return Rejection("leak", f"names something: {word!r}")
        capitalised = word[:1].isupper() and word != "I"
        if capitalised and not _sentence_initial(query, found.start()) \
                and word.lower() in own_words:
            return Rejection("leak", f"names something of the paper: {word!r}")
    shared = content_tokens(query) & content_tokens(paper.title)
    if len(shared) > MAX_TOT_TITLE_WORDS:
        return Rejection("leak", f"reuses {len(shared)} title words ({', '.join(sorted(shared))})")
    return None


def check_query(bucket: str, query: str, paper: Paper, body: str) -> Rejection | None:
    """None when ``query`` is a fair ``bucket`` query for ``paper``; else why not."""
    checks = [_word_count(bucket, query), _bad_anchor(query, paper)]
    if bucket == "body":
        checks += [_quoted_span(query, paper, body), _novel_and_grounded(query, paper, body)]
    elif bucket == "clue":
        quoted = Rejection("shape", "quotation marks") if '"' in query else None
        checks += [quoted, _novel_and_grounded(query, paper, body)]
    elif bucket == "tot":
        quoted = Rejection("shape", "quotation marks") if '"' in query else None
        checks += [quoted, _tot_names_or_values(query, paper)]
    else:
        raise ValueError(f"no LLM query for bucket {bucket!r}")
    return next((c for c in checks if c is not None), None)
