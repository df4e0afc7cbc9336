"""How much of a search result Needle keeps: every engine-supplied field is capped, and a cut
is flagged.

Why: an engine's title, URL and date are as untrusted as its snippet, and only the snippet
was ever cut. A 20,000-character title and a 5,000-character URL went to the judge whole and
were stored whole in every report, case page and site page that showed the result. Titles,
URLs and dates are now cut where results enter Needle (``HttpSearchClient.search``), so the
judge, the matchers and every output see the same bounded result. Snippets stay whole up to
the consumer's evidence budget (the judge notes how much it left out); a report keeps the
engine's snippet whole up to the evidence ceiling, so the reader sees what the engine sent.

A cut field's name goes in ``SearchResult.truncated`` and in the stored result
(``"truncated": ["title", "url"]``), so a reader knows the text is a head, not the whole.
The caps sit far above real values: titles are rarely over 200 characters, and browsers,
sitemaps and search engines treat URLs beyond about 2,000 characters as broken.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypedDict, Unpack

from needle_lib.contract.records import SearchResultRecord
from needle_lib.search.types import SearchResult

MAX_TITLE_CHARS = 500
MAX_URL_CHARS = 2048
#: A publication date is a date: anything longer is not one, and is kept only as a head.
MAX_DATE_CHARS = 64
#: The evidence ceiling when no uniform budget is set (``--snippet-chars 0``): what the judge
#: is shown of a snippet at most, and what a report stores of one.
MAX_SNIPPET_CHARS = 50_000


class _Cuts(TypedDict, total=False):
    """The fields a bound cuts, as ``dataclasses.replace`` takes them."""

    title: str
    url: str
    published_date: str
    snippet: str


def _with_cut(result: SearchResult, fields: list[str], **changes: Unpack[_Cuts]) -> SearchResult:
    if not fields:
        return result
    return replace(result, truncated=tuple(dict.fromkeys([*result.truncated, *fields])),
                   **changes)


def bound_result(result: SearchResult) -> SearchResult:
    """``result`` with its title, URL and date cut to their caps (each cut flagged)."""
    changes: _Cuts = {}
    if len(result.title) > MAX_TITLE_CHARS:
        changes["title"] = result.title[:MAX_TITLE_CHARS]
    if len(result.url) > MAX_URL_CHARS:
        changes["url"] = result.url[:MAX_URL_CHARS]
    date = result.published_date
    if date is not None and len(date) > MAX_DATE_CHARS:
        changes["published_date"] = date[:MAX_DATE_CHARS]
    return _with_cut(result, [name if name != "published_date" else "date"
                              for name in changes], **changes)


def cap_snippet(result: SearchResult, snippet_chars: int) -> SearchResult:
    """``result`` with its snippet cut to the run's evidence budget (0 = no cap), flagged:
    every engine is matched on the same amount of text, however long its snippets are."""
    if not snippet_chars or len(result.snippet) <= snippet_chars:
        return result
    return _with_cut(result, ["snippet"], snippet=result.snippet[:snippet_chars])


def stored_result(result: SearchResult) -> SearchResultRecord:
    """A result as a report stores it: every field bounded (the snippet by
    ``MAX_SNIPPET_CHARS``), and ``truncated`` naming the cut fields, only when some field
    was cut (a report of untouched results reads as it always did)."""
    kept = cap_snippet(bound_result(result), MAX_SNIPPET_CHARS)
    record = SearchResultRecord(url=kept.url, title=kept.title, snippet=kept.snippet,
                                published_date=kept.published_date)
    if kept.truncated:
        record["truncated"] = list(kept.truncated)
    return record
