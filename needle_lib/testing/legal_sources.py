"""Loopback fakes of the legal sources: CourtListener v4 search, the eCFR versioner API, and
an OpenAI-compatible chat endpoint standing in for the generation LLM.

One real HTTP server answers every path, in the documented shapes:

- ``GET /api/rest/v4/search/?type=o&court=…&filed_after=MM/DD/YYYY&filed_before=…`` →
  ``{"count", "next", "previous", "results": [...]}`` with result fields as in
  CourtListener's v4 search documentation (``caseName``, ``docketNumber``, ``dateFiled``,
  ``cluster_id``, ``court_id``, ``citation``, ``absolute_url``, ``opinions`` …), filtered by
  court and date (both ends inclusive) and ordered newest first. Without the expected
  ``Authorization: Token …`` header it answers 401 with DRF's ``{"detail": …}`` body.
- ``GET /api/versioner/v1/titles.json``, ``…/structure/<date>/title-<n>.json`` and
  ``…/full/<date>/title-<n>.xml?part=…&section=…`` (the section's ``DIV8`` inside its part's
  ``DIV5``, with the part's ``AUTH``/``SOURCE`` notes, as the versioner returns it).
- ``POST /v1/chat/completions``: the reply for the section named on the prompt's
  "Section heading:" line (``llm_replies[heading]``), ``NO_DISTINCT_QUERY`` otherwise.

``failures[path_prefix] = status`` makes matching requests fail (retry tests, drops).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.testing.chat import completion, message_texts
from needle_lib.testing.loopback import LoopbackServer, Response

TOKEN = "fake-courtlistener-token"
_JSON = "application/json"
_STRUCTURE = re.compile(r"^/api/versioner/v1/structure/([\d-]+)/title-(\d+)\.json$")
_FULL = re.compile(r"^/api/versioner/v1/full/([\d-]+)/title-(\d+)\.xml$")


def opinion_record(cluster_id: int, court: str, case_name: str, filed: str, *,
                   docket: str = "", citations: tuple[str, ...] = ()) -> JSONObject:
    """One v4 search result (type=o) with the documented fields."""
    slug = re.sub(r"[^a-z0-9]+", "-", case_name.lower()).strip("-")
    return {
        "absolute_url": f"/opinion/{cluster_id}/{slug}/",
        "attorney": "",
        "caseName": case_name,
        "caseNameFull": case_name,
        "citation": list(citations),
        "citeCount": 0,
        "cluster_id": cluster_id,
        "court": court.upper(),
        "court_citation_string": court,
        "court_id": court,
        "dateArgued": None,
        "dateFiled": filed,
        "dateReargued": None,
        "dateReargumentDenied": None,
        "docketNumber": docket,
        "docket_id": cluster_id + 500000,
        "judge": "",
        "lexisCite": "",
        "meta": {"timestamp": f"{filed}T10:00:00Z", "date_created": f"{filed}T09:00:00Z",
                 "score": {"bm25": 1.0}},
        "neutralCite": "",
        "opinions": [{"author_id": None, "cites": [], "download_url": None,
                      "id": cluster_id * 10, "joined_by_ids": [], "local_path": None,
                      "per_curiam": False, "sha1": "", "snippet": "Affirmed.",
                      "type": "010combined"}],
    }


def section_xml(part: str, identifier: str, heading: str, paragraphs: list[str]) -> str:
    """A section as the versioner's ``full`` endpoint returns it: inside its part."""
    body = "\n".join(f"<P>{escape(p)}</P>" for p in paragraphs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<DIV5 N="{part}" TYPE="PART">\n<HEAD>PART {part}—RULES</HEAD>\n'
        "<AUTH><HED>Authority:</HED><PSPACE>15 U.S.C. 78c, 78j.</PSPACE></AUTH>\n"
        "<SOURCE><HED>Source:</HED><PSPACE>13 FR 8183, Dec. 22, 1948.</PSPACE></SOURCE>\n"
        f'<DIV8 N="{identifier}" TYPE="SECTION" VOLUME="4">\n'
        f"<HEAD>§ {identifier} {escape(heading)}</HEAD>\n{body}\n"
        '<CITA TYPE="N">[13 FR 8183, Dec. 22, 1948]</CITA>\n</DIV8>\n</DIV5>\n'
    )


def structure_node(kind: str, identifier: str, description: str, *,
                   children: Sequence[JSONObject] | None = None,
                   reserved: bool = False) -> JSONObject:
    """One node of a title's structure JSON."""
    level = f"§ {identifier}" if kind == "section" else f"{kind.title()} {identifier}"
    node: JSONObject = {"type": kind, "label": f"{level} {description}",
                            "label_level": level, "label_description": description,
                            "identifier": identifier, "reserved": reserved}
    if children is not None:
        node["children"] = list[JSON](children)
    return node


def _filed(record: JSONObject) -> str:
    """A served record's ``dateFiled``, which this world's records all carry as text."""
    filed = record.get("dateFiled")
    if not isinstance(filed, str):
        raise TypeError(f"fake opinion {record.get('cluster_id')} has no dateFiled text")
    return filed


class FakeLegalSources(LoopbackServer):
    def __init__(self, *, cases: list[JSONObject], titles: list[JSONObject],
                 structures: dict[int, JSONObject], sections: dict[tuple[int, str], str],
                 llm_replies: dict[str, str], token: str = TOKEN) -> None:
        self.cases = cases
        self.titles = titles
        self.structures = structures
        self.sections = sections
        self.llm_replies = llm_replies
        self.token = token
        self.failures: dict[str, int] = {}
        self.requests: Counter[str] = Counter()
        self.search_params: list[dict[str, str]] = []
        self.user_agents: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def env(self) -> dict[str, str]:
        """Environment that routes CourtListener, eCFR and the generation LLM here."""
        return {
            "NEEDLE_COURTLISTENER_BASE_URL": self.url, "COURTLISTENER_API_TOKEN": self.token,
            "NEEDLE_ECFR_BASE_URL": self.url,
            "NEEDLE_LLM_BASE_URL": self.url, "NEEDLE_LLM_MODEL": "fake-projector",
            "OPENROUTER_API_KEY": "fake-llm-key",
        }

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        url = urlparse(path)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        with self._lock:
            self.user_agents.append(headers.get("User-Agent", ""))
            failure = next((s for prefix, s in self.failures.items()
                            if url.path.startswith(prefix)), None)
        if failure is not None:
            self._count("failures")
            return failure, _JSON, json.dumps({"detail": "failure"}).encode()
        if url.path == "/api/rest/v4/search/":
            return self._search(params, headers)
        if url.path == "/api/versioner/v1/titles.json":
            self._count("titles")
            return 200, _JSON, json.dumps({"titles": self.titles,
                                           "meta": {"date": "2026-07-01",
                                                    "import_in_progress": False}}).encode()
        if m := _STRUCTURE.match(url.path):
            self._count("structure")
            structure = self.structures.get(int(m.group(2)))
            if structure is None:
                return 404, _JSON, b'{"error": "Invalid input."}'
            return 200, _JSON, json.dumps(structure).encode()
        if m := _FULL.match(url.path):
            self._count("section")
            xml = self.sections.get((int(m.group(2)), params.get("section", "")))
            if xml is None:
                return 404, _JSON, b'{"error": "No matching content found."}'
            return 200, "application/xml", xml.encode()
        if url.path == "/v1/chat/completions" and method == "POST":
            return self._chat(json.loads(body or b"{}"))
        return 404, _JSON, b'{"detail": "Not found."}'

    def _count(self, kind: str) -> None:
        with self._lock:
            self.requests[kind] += 1

    def _search(self, params: dict[str, str], headers: Any) -> Response:
        self._count("search")
        with self._lock:
            self.search_params.append(params)
        auth = headers.get("Authorization", "")
        if auth != f"Token {self.token}":
            detail = "Invalid token." if auth else "Authentication credentials were not provided."
            return 401, _JSON, json.dumps({"detail": detail}).encode()

        def day(value: str) -> date:
            month, dom, year = value.split("/")
            return date(int(year), int(month), int(dom))

        low, high = day(params["filed_after"]), day(params["filed_before"])
        found = [r for r in self.cases if r.get("court_id") == params.get("court")
                 and low <= date.fromisoformat(_filed(r)) <= high]
        found.sort(key=_filed, reverse=True)
        return 200, _JSON, json.dumps({"count": len(found), "next": None, "previous": None,
                                       "results": found}).encode()

    def _chat(self, request: JSONObject) -> Response:
        self._count("llm")
        prompt = " ".join(message_texts(request))
        heading = re.search(r"Section heading: (.*)", prompt)
        content = self.llm_replies.get(heading.group(1).strip() if heading else "",
                                       "NO_DISTINCT_QUERY")
        answer = completion(content, model=request.get("model", "fake"), id="chatcmpl-legal",
                            usage={"prompt_tokens": 1, "completion_tokens": 1,
                                   "total_tokens": 2})
        return 200, _JSON, json.dumps(answer).encode()
