"""Loopback fakes for the search benchmarks: three engine APIs and a judge.

One real HTTP server answers Exa's ``POST /search``, Brave's ``GET /res/v1/web/search``,
SearXNG's ``GET /search?format=json`` and an OpenAI-compatible ``/v1/chat/completions`` judge,
each in its documented shape, with results and ratings derived deterministically from the
query and URL. The relevance judge also answers query profile requests (counted under
``judge`` like every judge call, and under ``profile``) and records the user turn of every
verdict request (``verdict_prompts``). Exa and Brave answer 401 to any key but the one
``env()`` sets, like the real APIs do to a wrong key. Point engines at it with
``NEEDLE_EXA_BASE_URL`` / ``NEEDLE_BRAVE_BASE_URL`` / ``NEEDLE_SEARXNG_BASE_URL`` and the
judge with ``NEEDLE_JUDGE_BASE_URL``.

Tavily's ``POST /search`` is served under ``/tavily`` (``tavily_env()``, kept out of
``env()`` so tavily stays keyless in runs that expect it skipped); ``tavily_depths``
records the ``search_depth`` of each request.

Known-item tests script the answers instead: ``scripted[(engine, query)]`` is the list of
results (``url``, ``title``, ``snippet``) that engine returns for that query, or an HTTP
status to fail with. The answer judge says "yes" exactly when the result's snippet contains
``JUDGE_YES`` (and fails with HTTP 400, not retried, when it contains ``JUDGE_DOWN``).

Structured output (``testing.structured``): the judge takes ``response_format`` as
``formats`` says (``openai`` by default; ``llama-cpp-python``; ``none`` refuses it) and
records each request's shape in ``response_formats``. ``chatty=True`` makes it a judge like
a small local model: it writes prose, with no JSON at all, unless a schema constrains it.

Pacing benchmarks and concurrency tests give each endpoint a ``latency`` (seconds, keyed by
``exa``, ``brave``, ``searxng``, ``judge`` or a mounted engine's name) and read
``max_in_flight`` (the most requests each had open at once; ``search``: all engines).
Further SearXNG-shaped engines are mounted under a path prefix: a config engine with base
URL ``<url>/<name>`` is served as ``<name>`` (its own URL order, latency and counters), so
a run can have many engines.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlparse

from needle_lib.jsonio import JSON, JSONObject, json_object, loads_untrusted
from needle_lib.judge.profile import SYSTEM_PROMPT as PROFILE_PROMPT
from needle_lib.testing.loopback import LoopbackServer, Response
from needle_lib.testing.structured import AskedFormat, asked_format, check_format, constrained

POOL = 8  # distinct URLs per query shared by the engines, so pooling and overlap matter
KEYS = {"exa": ("x-api-key", "fake-exa-key"), "brave": ("X-Subscription-Token", "fake-brave-key"),
        "tavily": ("Authorization", "Bearer fake-tavily-key")}


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _block(prompt: str, tag: str) -> Any:
    """The JSON value the judge prompt puts between ``<tag>`` and ``</tag>``, or None."""
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", prompt, flags=re.S)
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def fake_urls(query: str, engine: str, count: int) -> list[str]:
    """``count`` URLs for ``query``: drawn from a per-query pool, in an engine-specific order."""
    pool = [f"https://www.example{i}.com/{_digest(query) % 997}/story-{i}/" for i in range(POOL)]
    ranked = sorted(pool, key=lambda url: _digest(engine + url))
    return ranked[:count]


def fake_rating(url: str) -> int:
    return _digest(url) % 5


JUDGE_YES = "[judge-yes]"
JUDGE_DOWN = "[judge-down]"
Scripted = dict[tuple[str, str], "list[dict[str, str]] | int"]


class FakeSearchServer(LoopbackServer):
    def __init__(self, scripted: Scripted | None = None, *,
                 latency: dict[str, float] | None = None, formats: str = "openai",
                 chatty: bool = False, served_model: str | None = None) -> None:
        check_format(formats, AskedFormat("text"))  # an unknown name fails here
        self.formats = formats
        self.chatty = chatty
        #: the model id the judge's answers name (None: the one asked for, as llama-cpp-python
        #: echoes it); a test may change it, as a router puts another model behind an alias
        self.served_model = served_model
        #: the ``response_format`` shape of every judge request, in arrival order
        self.response_formats: list[str] = []
        self.requests: Counter[str] = Counter()
        self.latency = latency or {}
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        #: When each engine request arrived (monotonic): one per case, for pacing benchmarks.
        self.engine_times: list[float] = []
        #: Every request as (endpoint, arrived, answered), monotonic: how busy each engine's
        #: lane and the judge were over a run (``benchmarks/search_limit.py``).
        self.timeline: list[tuple[str, float, float]] = []
        #: Every relevance judge call in arrival order: ("profile" or "verdict", its query).
        self.judge_calls: list[tuple[str, str]] = []
        #: The user turn of every relevance verdict request, to check what the judge saw.
        self.verdict_prompts: list[str] = []
        self.scripted: Scripted = dict(scripted or {})  # a test may rescript its own server
        #: the ``search_depth`` of every Tavily request, in arrival order
        self.tavily_depths: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def _script(self, engine: str, query: str) -> list[dict[str, str]] | int | None:
        return self.scripted.get((engine, query))

    def env(self) -> dict[str, str]:
        """Environment that routes exa, brave and the judge to this server."""
        return {
            "NEEDLE_EXA_BASE_URL": self.url, "EXA_API_KEY": KEYS["exa"][1],
            "NEEDLE_BRAVE_BASE_URL": self.url, "BRAVE_API_KEY": KEYS["brave"][1],
            "NEEDLE_SEARXNG_BASE_URL": self.url,
            "NEEDLE_JUDGE_BASE_URL": self.url, "OPENROUTER_API_KEY": "fake-judge-key",
            "NEEDLE_JUDGE_MODEL": "fake-judge",
        }

    def tavily_env(self) -> dict[str, str]:
        """Environment that routes tavily to this server, with the key it accepts."""
        return {"NEEDLE_TAVILY_BASE_URL": f"{self.url}/tavily",
                "TAVILY_API_KEY": KEYS["tavily"][1].removeprefix("Bearer ")}

    def _tavily(self, body: JSONObject) -> JSONObject | int:
        depth, query, count = (body.get("search_depth"), body.get("query"),
                               body.get("max_results", 5))
        if not (isinstance(depth, str) and isinstance(query, str) and isinstance(count, int)):
            return 400  # Tavily's answer to a body without them
        with self._lock:
            self.tavily_depths.append(depth)
        return {"results": [{"url": u, "title": f"Tavily: {u}", "content": f"snippet about {u}"}
                            for u in fake_urls(query, "tavily", count)]}

    def _exa(self, body: JSONObject) -> JSONObject | int:
        query, count = body.get("query"), body.get("numResults", 5)
        if not isinstance(query, str) or not isinstance(count, int):
            return 400  # Exa refuses a request without a query text or with a bad count
        script = self._script("exa", query)
        if isinstance(script, int):
            return script
        if script is not None:  # both evidence fields Exa can return: text and highlights
            return {"results": [{"url": r["url"], "title": r["title"], "text": r["snippet"],
                                 "highlights": [r["snippet"]]} for r in script]}
        urls = fake_urls(query, "exa", count)
        return {"results": [{"url": u, "title": f"Exa: {u}", "text": f"snippet about {u}",
                             "publishedDate": "2026-11-29T00:00:00.000Z"} for u in urls]}

    def _brave(self, params: dict[str, list[str]]) -> JSONObject | int:
        script = self._script("brave", params["q"][0])
        if isinstance(script, int):
            return script
        if script is not None:
            return {"web": {"results": [{"url": r["url"], "title": r["title"],
                                         "description": r["snippet"]} for r in script]}}
        urls = fake_urls(params["q"][0], "brave", int(params.get("count", ["5"])[0]))
        return {"web": {"results": [{"url": u, "title": f"Brave: {u}",
                                     "description": f"snippet about {u}"} for u in urls]}}

    def _searxng(self, params: dict[str, list[str]], name: str) -> JSONObject:
        """SearXNG's JSON answer: one page of merged results (it takes no result count)."""
        query = params["q"][0]
        label = "SearXNG" if name == "searxng" else name
        results: list[JSON] = [{"url": u, "title": f"{label}: {u}", "content": f"snippet about {u}",
                    "engine": "duckduckgo", "engines": ["duckduckgo", "brave"],
                    "parsed_url": ["https", urlparse(u).netloc, urlparse(u).path, "", "", ""],
                    "score": 1.0 / (rank + 1), "category": "general", "positions": [rank + 1],
                    "publishedDate": None}
                   for rank, u in enumerate(fake_urls(query, name, POOL))]
        return {"query": query, "number_of_results": 0, "results": results, "answers": [],
                "corrections": [], "infoboxes": [], "suggestions": [],
                "unresponsive_engines": []}

    def _judge(self, body: JSONObject) -> Response | JSONObject | int:
        asked = asked_format(body)
        with self._lock:
            self.response_formats.append(asked.shape)
        refused = check_format(self.formats, asked)
        if refused is not None:
            return refused
        listed = body.get("messages", [])
        messages = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
        if not isinstance(listed, list) or len(messages) < len(listed):
            return 400  # a chat request's messages are a list of objects
        if any(JUDGE_DOWN in str(m.get("content", "")) for m in messages):
            return 400
        content = self._judge_reply(messages, asked)
        if self.chatty and not constrained(asked):
            content = "Thank you for the query. This result seems relevant and useful."
        return {"id": "fake", "object": "chat.completion",
                "model": self.served_model or body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}

    def _judge_reply(self, messages: list[JSONObject], asked: AskedFormat) -> str:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if "Expected answer:" in prompt:  # the known-item answer judge
            content = "yes" if JUDGE_YES in prompt else "no"
            if constrained(asked):
                content = json.dumps({"answer": content})
        elif messages and messages[0].get("content") == PROFILE_PROMPT:
            quoted = _block(prompt, "query")  # the query, quoted as a JSON string
            query = quoted if isinstance(quoted, str) else "?"
            with self._lock:
                self.judge_calls.append(("profile", query))
            content = json.dumps({
                "query_type": "specific", "query_domain": "news",
                "main_aspects": [query], "aux_aspects": [],
                "content_archetype": "ephemeral",
            })
            with self._lock:
                self.requests["profile"] += 1
        else:
            user = str(messages[-1].get("content", ""))  # the system turn names the tags too
            quoted = _block(user, "query")
            with self._lock:
                self.verdict_prompts.append(user)
                self.judge_calls.append(("verdict", quoted if isinstance(quoted, str) else "?"))
            result = _block(user, "result")
            url = result.get("url") if isinstance(result, dict) else None
            rating = fake_rating(url) if isinstance(url, str) else 0
            labels = ["FailsM", "SM", "MM", "HM", "FullyM"]
            content = json.dumps({"reasoning": "fake", "integrity": "pass", "freshness": "pass",
                                  "staleness": "pass", "domain": "n/a", "operators": "n/a",
                                  "rating": rating, "label": labels[rating]})
        return content

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        parsed = urlparse(path)
        params = parse_qs(parsed.query)
        if method == "GET" and parsed.path.endswith("/res/v1/web/search"):
            what = "brave"
        elif method == "GET":  # SearXNG's /search, or a mounted engine's /<name>/search
            what = parsed.path.removesuffix("/search").strip("/") or "searxng"
        elif parsed.path.endswith("/chat/completions"):
            what = "judge"
        elif parsed.path == "/tavily/search":
            what = "tavily"
        else:
            what = "exa"
        arrived = time.monotonic()
        with self._lock:
            self.requests[what] += 1
            if what != "judge":
                self.engine_times.append(arrived)
            # each endpoint, and "search": every engine together
            counted = (what,) if what == "judge" else (what, "search")
            for key in counted:
                self.in_flight[key] += 1
                self.max_in_flight[key] = max(self.max_in_flight[key], self.in_flight[key])
        try:
            if self.latency.get(what):
                time.sleep(self.latency[what])
            return self._answer(what, method, params, headers, body)
        finally:
            with self._lock:
                self.timeline.append((what, arrived, time.monotonic()))
                for key in counted:
                    self.in_flight[key] -= 1

    def _answer(self, what: str, method: str, params: dict[str, list[str]], headers: Any,
                body: bytes) -> Response:
        if what in KEYS and headers.get(KEYS[what][0]) != KEYS[what][1]:
            return 401, "application/json", json.dumps({"error": "invalid api key"}).encode()
        searxng = method == "GET" and what != "brave"  # SearXNG-shaped: built in or mounted
        if searxng and params.get("format") != ["json"]:
            # SearXNG serves its HTML page unless a JSON request names the format
            return 200, "text/html", b"<!DOCTYPE html><html><body>searxng</body></html>"
        payload: Response | JSONObject | int
        try:
            request = None if method == "GET" else json_object(loads_untrusted(body))
        except ValueError:
            request = None
        if searxng:
            payload = self._searxng(params, what)
        elif what == "brave":
            payload = self._brave(params)
        elif request is None:
            payload = 400  # the judge, Exa and Tavily take a JSON object
        elif what == "judge":
            payload = self._judge(request)
        elif what == "tavily":
            payload = self._tavily(request)
        else:
            payload = self._exa(request)
        if isinstance(payload, int):
            return payload, "application/json", b'{"error": "scripted failure"}'
        if isinstance(payload, tuple):
            return payload
        return 200, "application/json", json.dumps(payload).encode()
