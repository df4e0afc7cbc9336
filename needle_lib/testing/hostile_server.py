"""A loopback server that misbehaves on purpose: the hostile-server suite's other side.

The first path segment picks the misbehaviour, so one server serves every case and any
client (chat, search engine, source) points at it through its base URL
(``f"{server.url}/drip"``):

- ``endless``: 200 and a body that never ends (64 KiB chunks) — until ``max_seconds``;
- ``drip``: one byte every ``drip_interval`` seconds, so no single read ever times out;
- ``huge``: a valid chat completion whose answer is ``huge_bytes`` long, streamed;
- ``bomb``: a gzip body of ``bomb_wire_bytes``-ish that inflates to ``bomb_bytes``;
- ``deep``: JSON nested ``deep`` levels (``[[[…]]]``);
- ``items``: an Exa-shaped results page with malformed items among good ones;
- ``echo``: a 401 whose body echoes the request's key just across a 200-character cut.

Bounded on our side too: every stream stops after ``max_seconds``, so a client that does
not enforce its deadline fails its test instead of hanging it.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterator
from functools import cache
from typing import Any

from needle_lib.testing.loopback import LoopbackServer, Response

CHUNK = 64 * 1024
_JSON = "application/json"
#: Well-formed results served next to the malformed ones by ``items``.
GOOD_URLS = ("https://good.example/one", "https://good.example/two")
MALFORMED_ITEMS: list[Any] = [None, 1, "s", {"url": 123, "title": "numeric url"},
                              {"title": "no url at all"}]


def completion_head() -> bytes:
    return b'{"id":"x","object":"chat.completion","choices":[{"index":0,"message":' \
           b'{"role":"assistant","content":"'


def completion_tail() -> bytes:
    return b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}'


@cache
def gzip_bomb(inflated: int) -> bytes:
    """A gzip member that inflates to a chat completion ``inflated`` bytes long."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(completion_head())]
    block = b"0" * (1024 * 1024)
    left = inflated
    while left > 0:
        parts.append(packer.compress(block[: min(left, len(block))]))
        left -= len(block)
    parts.append(packer.compress(completion_tail()))
    parts.append(packer.flush())
    return b"".join(parts)


class HostileServer(LoopbackServer):
    def __init__(self, *, max_seconds: float = 60.0, drip_interval: float = 0.05,
                 huge_bytes: int = 50 * 1024 * 1024, bomb_bytes: int = 64 * 1024 * 1024,
                 deep: int = 200_000) -> None:
        super().__init__()
        self.max_seconds = max_seconds
        self.drip_interval = drip_interval
        self.huge_bytes = huge_bytes
        self.bomb_bytes = bomb_bytes
        self.deep = deep
        self.requests: list[str] = []

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        mode = path.strip("/").split("/", 1)[0]
        self.requests.append(mode)
        if mode == "endless":
            return 200, _JSON, self._until_deadline(completion_head(), b"a" * CHUNK)
        if mode == "drip":
            return 200, _JSON, self._until_deadline(completion_head(), b"a",
                                                    self.drip_interval)
        if mode == "huge":
            return 200, _JSON, self._huge()
        if mode == "bomb":
            return 200, _JSON, gzip_bomb(self.bomb_bytes), {"Content-Encoding": "gzip"}
        if mode == "deep":
            return 200, _JSON, b"[" * self.deep + b"]" * self.deep
        if mode == "items":
            good = [{"url": url, "title": f"good {n}", "text": "evidence"}
                    for n, url in enumerate(GOOD_URLS)]
            page = {"results": [good[0], *MALFORMED_ITEMS, good[1]]}
            return 200, _JSON, json.dumps(page).encode()
        if mode == "echo":
            key = _presented_key(headers)
            return 401, _JSON, json.dumps({"error": "x" * 180 + f" bad key {key}"}).encode()
        return 404, "text/plain", f"unknown hostile mode {mode!r}".encode()

    def _until_deadline(self, head: bytes, chunk: bytes,
                        interval: float = 0.0) -> Iterator[bytes]:
        stop = time.monotonic() + self.max_seconds
        yield head
        while time.monotonic() < stop:
            yield chunk
            if interval:
                time.sleep(interval)

    def _huge(self) -> Iterator[bytes]:
        yield completion_head()
        block = b"b" * CHUNK
        for _ in range(self.huge_bytes // CHUNK):
            yield block
        yield completion_tail()


def _presented_key(headers: Any) -> str:
    for name in ("Authorization", "x-api-key", "X-API-Key"):
        value = headers.get(name)
        if value:
            return str(value).removeprefix("Bearer ").strip()
    return ""
