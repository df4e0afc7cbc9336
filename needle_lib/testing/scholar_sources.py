"""A loopback fake of every source ``needle scholar generate`` reads, in their real shapes.

One server answers, from a list of ``FakePaper``:

- the arXiv API (``GET /api/query``): an Atom feed filtered by the ``cat:`` prefixes and the
  ``submittedDate:[… TO …]`` window of ``search_query``, newest first, ``max_results`` cut;
- arXiv's HTML rendering (``GET /html/<id>``): a LaTeXML page (author block, abstract,
  sections, inline math, a figure caption, a bibliography), 404 when ``html`` is False;
- Europe PMC (``GET /europepmc/webservices/rest/search``): ``resultType=core`` JSON filtered
  by the ``FIRST_PDATE:[… TO …]`` window; ``…/PMC<n>/fullTextXML``: a JATS article with a
  DOCTYPE, front matter, body (sections, citations, formulas, a figure, a table), back;
- NCBI's ID converter (``GET /tools/idconv/api/v1/articles/``): JSON ``records``, an error
  record for an unknown PMCID;
- the generation LLM (``POST /v1/chat/completions``): the answer scripted for the paper named
  on the prompt's ``Title:`` line and the bucket on its ``Query type:`` line (an int is an
  HTTP status to fail with; no script is the refusal sentinel).

Published dates are ``now - age_days``, so windows computed from the same ``now`` select
papers exactly as the real services would. ``env()`` routes every client here. A source
named in ``failing`` (``arxiv``, ``europepmc``, ``ncbi``…) answers 503 to every request.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.testing.chat import completion, message_texts
from needle_lib.testing.loopback import LoopbackServer, Response

REFUSAL = "NO_DISTINCT_QUERY"
EPMC_ROOT = "/europepmc/webservices/rest"
_FILLER = (
    "The remaining paragraphs describe the experimental protocol in routine terms, the "
    "preparation of the inputs, the order in which the measurements were taken and the "
    "checks that were repeated whenever a run had to be restarted after an interruption. "
    "None of this is specific to the question at hand; it is the ordinary bookkeeping that "
    "every careful study of this kind reports so that a reader could repeat it."
)


@dataclass(frozen=True, eq=False)  # papers are compared and hashed by identity
class FakePaper:
    suite: str  # arxiv | europepmc
    title: str
    abstract: str
    paragraphs: tuple[str, ...]
    age_days: int
    answers: dict[str, str | int] = field(default_factory=dict)
    categories: tuple[str, ...] = ("cs.CL",)  # arXiv: primary first
    arxiv: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None  # digits
    idconv_pmid: str | None = None  # what NCBI's converter knows when the record has no PMID
    authors: tuple[str, ...] = ("Ada Lovelace", "Grace Hopper")
    html: bool = True


def _window(query: str, field_name: str) -> tuple[date, date]:
    found = re.search(rf"{field_name}:\[(\S+) TO (\S+)\]", query)
    assert found, f"no {field_name} window in {query!r}"
    first, last = (re.sub(r"\D", "", part)[:8] for part in found.groups())
    return (datetime.strptime(first, "%Y%m%d").date(), datetime.strptime(last, "%Y%m%d").date())


class FakeScholarSources(LoopbackServer):
    def __init__(self, papers: list[FakePaper], now: datetime) -> None:
        self.papers = papers
        self.now = now
        self.requests: Counter[str] = Counter()
        self.prompts: list[str] = []
        self.failing: set[str] = set()
        self._lock = threading.Lock()
        super().__init__()

    def env(self) -> dict[str, str]:
        return {
            "NEEDLE_ARXIV_BASE_URL": self.url,
            "NEEDLE_ARXIV_HTML_BASE_URL": self.url,
            "NEEDLE_EUROPEPMC_BASE_URL": f"{self.url}{EPMC_ROOT}",
            "NEEDLE_NCBI_BASE_URL": self.url,
            "NEEDLE_LLM_BASE_URL": self.url,
            "NEEDLE_LLM_MODEL": "fake-writer",
            "OPENROUTER_API_KEY": "fake-llm-key",
        }

    def published(self, paper: FakePaper) -> datetime:
        return self.now - timedelta(days=paper.age_days)

    def _route(self, route: str) -> str:
        if route == "/api/query":
            return "arxiv"
        if route.startswith("/html/"):
            return "arxiv-html"
        if route == f"{EPMC_ROOT}/search":
            return "europepmc"
        if route.startswith(EPMC_ROOT) and route.endswith("/fullTextXML"):
            return "europepmc-xml"
        if route == "/tools/idconv/api/v1/articles/":
            return "ncbi"
        return "llm" if route.endswith("/chat/completions") else "unknown"

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        parsed = urlparse(path)
        params = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        what = self._route(parsed.path)
        with self._lock:
            self.requests[what] += 1
        if what in self.failing:
            return 503, "text/plain", b"Service Temporarily Unavailable"
        if what == "arxiv":
            return 200, "application/atom+xml", self._atom(params).encode()
        if what == "arxiv-html":
            return self._html(parsed.path.removeprefix("/html/"))
        if what == "europepmc":
            return 200, "application/json", json.dumps(self._epmc_search(params)).encode()
        if what == "europepmc-xml":
            return self._jats(parsed.path.removeprefix(f"{EPMC_ROOT}/PMC").split("/")[0])
        if what == "ncbi":
            return 200, "application/json", json.dumps(self._idconv(params)).encode()
        if what == "llm":
            return self._chat(json.loads(body))
        return 404, "text/plain", b"not found"

    # arXiv API -----------------------------------------------------------------------------
    def _atom(self, params: dict[str, str]) -> str:
        query = params["search_query"]
        prefixes = set(re.findall(r"cat:([a-z-]+)\.\*", query))
        first, last = _window(query, "submittedDate")
        listed = sorted(
            (p for p in self.papers if p.suite == "arxiv"
             and any(c.split(".")[0] in prefixes for c in p.categories)
             and first <= self.published(p).date() <= last),
            key=lambda p: p.age_days)[: int(params.get("max_results", 10))]
        entries = "".join(self._entry(p) for p in listed)
        return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/fake</id>
  <title>arXiv Query: {escape(query)}</title>
  <updated>{self.now:%Y-%m-%dT%H:%M:%SZ}</updated>
  <opensearch:itemsPerPage>{params.get("max_results", 10)}</opensearch:itemsPerPage>
  <opensearch:totalResults>{len(listed)}</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>{entries}
</feed>"""

    def _entry(self, p: FakePaper) -> str:
        when = f"{self.published(p):%Y-%m-%dT%H:%M:%SZ}"
        # arXiv wraps long titles and indents abstracts; the reader must flatten both
        title = escape(p.title).replace(" ", "\n  ", 1)
        doi = (f'\n    <link title="doi" href="https://doi.org/{p.doi}" rel="related"/>'
               f"\n    <arxiv:doi>{p.doi}</arxiv:doi>") if p.doi else ""
        authors = "".join(f"\n    <author><name>{escape(a)}</name></author>" for a in p.authors)
        categories = "".join(f'\n    <category term="{c}" scheme="http://arxiv.org/schemas/atom"/>'
                             for c in p.categories)
        return f"""
  <entry>
    <id>http://arxiv.org/abs/{p.arxiv}v2</id>
    <title>{title}</title>
    <updated>{when}</updated>
    <link href="https://arxiv.org/abs/{p.arxiv}v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="https://arxiv.org/pdf/{p.arxiv}v2" rel="related"
      type="application/pdf"/>{doi}
    <summary>  {escape(p.abstract)}
    </summary>{categories}
    <published>{when}</published>
    <arxiv:comment>12 pages, 3 figures</arxiv:comment>
    <arxiv:primary_category term="{p.categories[0]}"/>{authors}
  </entry>"""

    def _html(self, arxiv_id: str) -> Response:
        paper = next((p for p in self.papers if p.arxiv == arxiv_id and p.html), None)
        if paper is None:
            return 404, "text/html", b"<html><body><h1>No HTML for this paper</h1></body></html>"
        paragraphs = "".join(
            f'<div class="ltx_para" id="S1.p{i}"><p class="ltx_p">{escape(text)} with '
            f'<math alttext="x_{i}" class="ltx_Math" display="inline"><semantics><mi>x</mi>'
            f'<annotation encoding="application/x-tex">x_{i}</annotation></semantics></math>'
            " as its variable.</p></div>"
            for i, text in enumerate((*paper.paragraphs, *[_FILLER] * 4), start=1))
        authors = "".join(f'<span class="ltx_personname">{escape(a)}</span>'
                          for a in paper.authors)
        page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>{escape(paper.title)}</title>
<script>window.x = "<p>not text</p>";</script><style>p {{ margin: 0 }}</style></head>
<body><header class="desktop_header"><nav><p>Back to arXiv</p></nav></header>
<div class="ltx_page_main"><div class="ltx_page_content">
<article class="ltx_document ltx_authors_1line">
<h1 class="ltx_title ltx_title_document">{escape(paper.title)}</h1>
<div class="ltx_authors"><span class="ltx_creator ltx_role_author">{authors}</span></div>
<div class="ltx_abstract"><h6 class="ltx_title ltx_title_abstract">Abstract</h6>
<p class="ltx_p">{escape(paper.abstract)}</p></div>
<section class="ltx_section" id="S1"><h2 class="ltx_title ltx_title_section">1 Results</h2>
{paragraphs}
<figure class="ltx_figure" id="S1.F1"><img src="x1.png" class="ltx_graphics" alt=""/>
<figcaption class="ltx_caption ltx_centering"><span class="ltx_tag">Figure 1: </span>
Overview of the measurements.</figcaption></figure>
</section>
<section class="ltx_bibliography" id="bib"><h2 class="ltx_title">References</h2>
<ul class="ltx_biblist"><li class="ltx_bibitem"><p class="ltx_p">A. Turing. Computing
machinery and intelligence. Mind, 1950.</p></li></ul></section>
</article></div>
<footer class="ltx_page_footer"><p>Generated by LaTeXML</p></footer></div>
</body></html>"""
        return 200, "text/html; charset=utf-8", page.encode()

    # Europe PMC ----------------------------------------------------------------------------
    def _epmc_search(self, params: dict[str, str]) -> JSONObject:
        first, last = _window(params["query"], "FIRST_PDATE")
        listed = sorted((p for p in self.papers if p.suite == "europepmc"
                         and first <= self.published(p).date() <= last),
                        key=lambda p: p.age_days)[: int(params.get("pageSize", 25))]
        return {
            "version": "6.9", "hitCount": len(listed), "nextCursorMark": "AoIIP4AAACgzOTI=",
            "request": {"queryString": params["query"], "resultType": "core",
                        "cursorMark": "*", "pageSize": int(params.get("pageSize", 25)),
                        "sort": "", "synonym": False},
            "resultList": {"result": [self._record(p) for p in listed]},
        }

    def _record(self, p: FakePaper) -> JSONObject:
        record: JSONObject = {
            "id": p.pmid or f"PMC{p.pmcid}", "source": "MED" if p.pmid else "PMC",
            "pmcid": f"PMC{p.pmcid}",
            "fullTextIdList": {"fullTextId": [f"PMC{p.pmcid}"]},
            "title": f"<i>{p.title.split()[0]}</i> {' '.join(p.title.split()[1:])}",
            "authorString": ", ".join(p.authors) + ".",
            "authorList": {"author": [
                {"fullName": a, "firstName": a.split()[0], "lastName": a.split()[-1],
                 "initials": a[0]} for a in p.authors]},
            "journalInfo": {"journal": {"title": "Journal of Fake Results"}},
            "pubYear": str(self.published(p).year),
            "abstractText": f"<h4>Background</h4>{escape(p.abstract)}",
            "language": "eng", "pubModel": "Electronic", "isOpenAccess": "Y", "inEPMC": "Y",
            "inPMC": "Y", "hasPDF": "Y", "firstPublicationDate": f"{self.published(p):%Y-%m-%d}",
            "firstIndexDate": f"{self.published(p):%Y-%m-%d}",
        }
        if p.pmid:
            record["pmid"] = p.pmid
        if p.doi:
            record["doi"] = p.doi
        return record

    def _jats(self, pmcid: str) -> Response:
        paper = next((p for p in self.papers if p.pmcid == pmcid), None)
        if paper is None:
            return 404, "application/xml", b"<error>not found</error>"
        paragraphs = "".join(
            f'<p>{escape(text)} <xref ref-type="bibr" rid="R{i}">{i}</xref> using '
            '<inline-formula><mml:math><mml:mi>y</mml:mi></mml:math></inline-formula>.</p>'
            for i, text in enumerate((*paper.paragraphs, *[_FILLER] * 4), start=1))
        xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article
  PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.2 20190208//EN"
  "JATS-archivearticle1.dtd">
<article xmlns:mml="http://www.w3.org/1998/Math/MathML"
  xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article">
<front><journal-meta><journal-title-group>
<journal-title>Journal of Fake Results</journal-title></journal-title-group></journal-meta>
<article-meta><article-id pub-id-type="pmcid">PMC{pmcid}</article-id>
<title-group><article-title>{escape(paper.title)}</article-title></title-group>
<abstract><p>{escape(paper.abstract)}</p></abstract></article-meta></front>
<body><sec id="s1"><title>Methods</title>{paragraphs}
<fig id="F1"><label>Figure 1</label>
<caption><p>Overview of the cohort and follow-up.</p></caption></fig>
<table-wrap id="T1"><label>Table 1</label>
<table><tr><td>12.5</td><td>0.031</td></tr></table></table-wrap>
</sec></body>
<back><ref-list><ref id="R1">
<mixed-citation>Turing A. Computing machinery. Mind. 1950.</mixed-citation></ref></ref-list>
</back>
</article>"""
        return 200, "application/xml;charset=UTF-8", xml.encode()

    # NCBI ID converter ---------------------------------------------------------------------
    def _idconv(self, params: dict[str, str]) -> JSONObject:
        records: list[JSON] = []
        for requested in params["ids"].split(","):
            paper = next((p for p in self.papers if f"PMC{p.pmcid}" == requested), None)
            if paper is None:
                records.append({"requested-id": requested, "status": "error",
                                "errmsg": "Identifier not found in PMC"})
                continue
            record: JSONObject = {"requested-id": requested, "pmcid": requested}
            pmid = paper.pmid or paper.idconv_pmid
            if pmid:
                record["pmid"] = int(pmid)
            if paper.doi:
                record["doi"] = paper.doi
            records.append(record)
        return {"status": "ok", "responseDate": f"{self.now:%Y-%m-%d %H:%M:%S}",
                "request": f"ids={params['ids']};format=json", "records": records}

    # generation LLM ------------------------------------------------------------------------
    def _chat(self, body: JSONObject) -> Response:
        prompt = "\n".join(message_texts(body))
        with self._lock:
            self.prompts.append(prompt)
        title = re.search(r"^Title: (.+)$", prompt, re.M)
        bucket = re.search(r"^Query type: (\w+)$", prompt, re.M)
        paper = next((p for p in self.papers if title and p.title == title.group(1)), None)
        answer = paper.answers.get(bucket.group(1), REFUSAL) if paper and bucket else REFUSAL
        if isinstance(answer, int):
            return answer, "application/json", json.dumps({"error": {"message": "boom"}}).encode()
        reply = completion(answer, model=body.get("model"), id="fake",
                           usage={"prompt_tokens": len(prompt) // 4, "completion_tokens": 20})
        return 200, "application/json", json.dumps(reply).encode()
