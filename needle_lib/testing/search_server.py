"""Loopback fakes for the search benchmarks: two engine APIs and a relevance judge.

One real HTTP server answers Exa's ``POST /search``, Brave's ``GET /res/v1/web/search`` and an
OpenAI-compatible ``/v1/chat/completions`` judge, each in its documented shape, with results
and ratings derived deterministically from the query and URL. The judge also answers query
profile requests (counted under ``judge`` like every judge call, and under ``profile``).
Point engines at it with ``NEEDLE_EXA_BASE_URL`` / ``NEEDLE_BRAVE_BASE_URL`` and the judge
with ``NEEDLE_JUDGE_BASE_URL``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlparse

from needle_lib.judge.profile import SYSTEM_PROMPT as PROFILE_PROMPT
from needle_lib.testing.loopback import LoopbackServer, Response

POOL = 8  # distinct URLs per query shared by the engines, so pooling and overlap matter


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def fake_urls(query: str, engine: str, count: int) -> list[str]:
    """``count`` URLs for ``query``: drawn from a per-query pool, in an engine-specific order."""
    pool = [f"https://www.example{i}.com/{_digest(query) % 997}/story-{i}/" for i in range(POOL)]
    ranked = sorted(pool, key=lambda url: _digest(engine + url))
    return ranked[:count]


def fake_rating(url: str) -> int:
    return _digest(url) % 5


class FakeSearchServer(LoopbackServer):
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        #: The user turn of every verdict request, for tests that check what the judge saw.
        self.verdict_prompts: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def env(self) -> dict[str, str]:
        """Environment that routes exa, brave and the judge to this server."""
        return {
            "NEEDLE_EXA_BASE_URL": self.url, "EXA_API_KEY": "fake-exa-key",
            "NEEDLE_BRAVE_BASE_URL": self.url, "BRAVE_API_KEY": "fake-brave-key",
            "NEEDLE_JUDGE_BASE_URL": self.url, "OPENROUTER_API_KEY": "fake-judge-key",
            "NEEDLE_JUDGE_MODEL": "fake-judge",
        }

    def _exa(self, body: dict[str, Any]) -> dict[str, Any]:
        urls = fake_urls(body["query"], "exa", body.get("numResults", 5))
        return {"results": [{"url": u, "title": f"Exa: {u}", "text": f"snippet about {u}",
                             "publishedDate": "2026-11-29T00:00:00.000Z"} for u in urls]}

    def _brave(self, params: dict[str, list[str]]) -> dict[str, Any]:
        urls = fake_urls(params["q"][0], "brave", int(params.get("count", ["5"])[0]))
        return {"web": {"results": [{"url": u, "title": f"Brave: {u}",
                                     "description": f"snippet about {u}"} for u in urls]}}

    def _judge(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        messages = body.get("messages", [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if messages and messages[0].get("content") == PROFILE_PROMPT:
            query = re.search(r"<query>(.*)</query>", prompt)
            content = json.dumps({
                "query_type": "specific", "query_domain": "news",
                "main_aspects": [query.group(1) if query else "?"], "aux_aspects": [],
                "content_archetype": "ephemeral",
            })
            return "profile", self._completion(body, content)
        with self._lock:
            self.verdict_prompts.append(str(messages[-1].get("content", "")))
        url = re.search(r"https?://\S+?(?=[\s<])", prompt)
        rating = fake_rating(url.group(0)) if url else 0
        labels = ["FailsM", "SM", "MM", "HM", "FullyM"]
        content = json.dumps({"reasoning": "fake", "integrity": "pass", "freshness": "pass",
                              "staleness": "pass", "domain": "n/a", "operators": "n/a",
                              "rating": rating, "label": labels[rating]})
        return "verdict", self._completion(body, content)

    @staticmethod
    def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
        return {"id": "fake", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        parsed = urlparse(path)
        kind = None
        if method == "GET":
            what, payload = "brave", self._brave(parse_qs(parsed.query))
        elif parsed.path.endswith("/chat/completions"):
            what = "judge"
            kind, payload = self._judge(json.loads(body))
        else:
            what, payload = "exa", self._exa(json.loads(body))
        with self._lock:
            self.requests[what] += 1
            if kind == "profile":
                self.requests["profile"] += 1
        return 200, "application/json", json.dumps(payload).encode()
