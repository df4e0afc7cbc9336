"""A loopback stand-in for the Hugging Face hub's file endpoint, for ``hf_hub_download``.

It answers ``HEAD`` and ``GET`` on ``/{repo}/resolve/{revision}/{path}`` (model repos) and
``/datasets/{repo}/resolve/{revision}/{path}`` with the headers the client reads to cache a
file (``X-Repo-Commit``, ``ETag``, ``Content-Length``), so the real download-and-cache path
runs offline. Point ``NEEDLE_HF_BASE_URL`` at ``server.url``.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlparse

from needle_lib.testing.loopback import LoopbackServer, Response

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHubServer(LoopbackServer):
    """``files`` maps ``(repo_type, repo_id, path)`` to bytes; repo_type is "model" or
    "dataset"."""

    def __init__(self, files: dict[tuple[str, str, str], bytes]) -> None:
        self.files = files
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        super().__init__()

    def _locate(self, path: str) -> tuple[str, str, str] | None:
        parts = unquote(urlparse(path).path).strip("/").split("/")
        repo_type = "model"
        if parts and parts[0] == "datasets":
            repo_type, parts = "dataset", parts[1:]
        if "resolve" not in parts:
            return None
        at = parts.index("resolve")
        return repo_type, "/".join(parts[:at]), "/".join(parts[at + 2:])

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        key = self._locate(path)
        with self._lock:
            self.requests[method] += 1
        if key is None or key not in self.files:
            return 404, "text/plain", b"Entry not found"
        return 200, "application/octet-stream", self.files[key]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                status, content_type, body, *_ = server.handle(
                    self.command, self.path, self.headers, b""
                )
                payload = body if isinstance(body, bytes) else b"".join(body)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                if status == 200:
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("ETag", f'"{hashlib.sha256(payload).hexdigest()}"')
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
