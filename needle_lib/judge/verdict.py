"""The judge's vocabulary: the Needs Met scale, a verdict, and the one error a judgement raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from needle_lib.errors import NeedleError

#: Google "Needs Met" rating → label. The labels are the exact strings the prompt asks for.
LABELS: dict[int, str] = {0: "FailsM", 1: "SM", 2: "MM", 3: "HM", 4: "FullyM"}
#: What each label stands for, for readers of a report (``3 HM`` in a score cell).
MEANINGS: dict[str, str] = {"FailsM": "fails to meet", "SM": "slightly meets",
                            "MM": "moderately meets", "HM": "highly meets",
                            "FullyM": "fully meets"}

#: A relevant result is rated "highly meets" or better: what makes a judged case PASSED,
#: what uniqueness counts as a relevant URL, and below which two engines sharing a URL is
#: suspicious. One threshold for all three, as NEEDLE defines relevance (HM/FullyM).
RELEVANT_RATING = 3

#: What a verdict keeps of the judge's reply (and of its reasoning): a verdict is a few
#: hundred characters of JSON; past this the reply is prose or noise, and it would be
#: stored in every report once per result.
MAX_REPLY_CHARS = 2_000

#: The checks the judge reports before it rates, each ``pass``/``fail`` (integrity also
#: ``limit``: usable but thin) or ``n/a``. They make a rating auditable: a low score says
#: whether the page was broken, stale, off-domain or ignored the query's operators.
GATES: tuple[str, ...] = ("integrity", "freshness", "staleness", "domain", "operators")


class JudgeItem(Protocol):
    """What the judge sees of a result (``needle_lib.search.SearchResult`` fits)."""

    @property
    def url(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def snippet(self) -> str: ...

    @property
    def published_date(self) -> str | None: ...


@dataclass(frozen=True)
class ServedBy:
    """Who answered one judge call: the model id the server put in its answer, how output
    was asked for (``json_schema``, ``json_object`` or ``text``) and when (epoch seconds:
    when it answered; read from the cache, when the entry was stored).

    A verdict keeps the answer that made it, in the cache too, so a case's judge identity is
    that of the verdicts it used (``judge.base.seen_in``), not whatever the process's judge
    learnt last: a case served from the cache would otherwise record the identity of the
    case that happened to ask before it. None: not known (a cache entry from before Needle
    kept it, a server that names no model).
    """

    model: str | None = None
    output: str | None = None
    at: float = 0.0


#: A verdict nobody is known to have answered (built by hand, or an old cache entry's).
UNKNOWN = ServedBy()


@dataclass(frozen=True)
class Verdict:
    """One rating. ``cached`` is True when it came from the on-disk cache, not a fresh call."""

    rating: int
    label: str
    reasoning: str
    cached: bool = False
    #: Gate name (see ``GATES``) → the judge's lowercased answer; only gates it reported.
    gates: dict[str, str] = field(default_factory=dict)
    #: The judge's reply as it came (secrets masked, at most ``MAX_REPLY_CHARS``: head and
    #: tail), kept with the rating for audit: what the model actually wrote, e.g. when a
    #: result tried to talk it into a rating. Not part of a verdict's identity.
    reply: str = field(default="", compare=False)
    #: Which model answered it and how (``ServedBy``); provenance, not part of its identity.
    served_by: ServedBy = field(default=UNKNOWN, compare=False)


class JudgeError(NeedleError):
    """A result could not be rated (request failed or the answer was unusable).

    A failure is never a zero: a zero would silently score the engine as irrelevant for what
    is an infrastructure or model problem, so callers count it and skip the query instead.
    """

    def __init__(self, detail: str, *, query: str | None = None, url: str | None = None,
                 reply: str | None = None, served_by: ServedBy | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.query = query
        self.url = url
        #: the unusable reply, as ``Verdict.reply`` keeps a usable one (None: no reply)
        self.reply = reply
        #: who wrote the unusable reply (None: no reply came, e.g. an HTTP error)
        self.served_by = served_by

    def __str__(self) -> str:
        if self.query is None and self.url is None:
            return self.detail
        return f"judging query {self.query!r}, result {self.url}: {self.detail}"
