"""A loopback stand-in for the Hugging Face hub: file downloads, and the upload API.

Reads: ``HEAD``/``GET`` on ``/{repo}/resolve/{revision}/{path}`` (model repos) and
``/datasets/{repo}/resolve/{revision}/{path}`` with the headers ``hf_hub_download`` reads to
cache a file (``X-Repo-Commit``, ``ETag``, ``Content-Length``).

Writes, in the shapes ``huggingface_hub`` (2.x) sends and parses (read from its
``hf_api.py`` and ``_commit_api.py``):

- ``POST /api/repos/create`` (JSON ``{name, organization, type}``): 200 ``{url}``, or 409
  ``{error, url}`` when the repo exists (``create_repo(exist_ok=True)`` accepts that);
- ``POST /api/{type}s/{repo}/preupload/{rev}`` (``{files: [{path, sample, size}]}``): every
  file ``uploadMode: "regular"`` (inlined in the commit, so no LFS/Xet round trip), with the
  git blob ``oid`` of the stored file so the client skips unchanged files itself;
- ``POST /api/{type}s/{repo}/commit/{rev}`` (NDJSON: a ``header`` line, then ``file``
  lines with base64 ``content`` and ``deletedFile``/``deletedFolder`` lines): applied at
  once, answered ``{commitUrl, commitOid}``;
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]?recursive=…``: ``[{type, oid, size, path}]``,
  paged ``page_size`` entries at a time with a GitHub-style ``Link: <…>; rel="next"``
  header (the hub's cursor pagination; the client follows it);
- ``GET /api/{type}s/{repo}/revision/{rev}``: ``{id, sha, siblings}`` (asked after a
  commit whose files were all unchanged).

``fail_commits`` makes the first N commit requests answer 503 (with ``Retry-After: 0``), so
tests see the caller's retry policy at work. Point ``HF_ENDPOINT`` (or ``NEEDLE_HF_BASE_URL``)
at ``server.url``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any, TypedDict
from urllib.parse import parse_qs, unquote, urlparse

from needle_lib.jsonio import JSON as JSONValue
from needle_lib.jsonio import JSONObject, json_object, loads_untrusted
from needle_lib.net.payload import member
from needle_lib.testing.loopback import LoopbackServer, Response

COMMIT = "0123456789abcdef0123456789abcdef01234567"
JSON = "application/json"

FileKey = tuple[str, str, str]  # (repo_type, repo_id, path in repo)


class Commit(TypedDict):
    """A commit the fake applied: its summary, the paths it wrote (``-path`` deleted)."""

    summary: str
    paths: list[str]
    oid: str


class TreeEntry(TypedDict):
    """One entry of a tree listing, as the hub answers it."""

    type: str
    oid: str
    size: int
    path: str


def _bad_request(message: str) -> Response:
    return 400, JSON, json.dumps({"error": message}).encode()


def _request_object(body: bytes) -> JSONObject:
    """A request's JSON object body; ``{}`` for any other body (the checks then name what
    is missing)."""
    try:
        return json_object(loads_untrusted(body)) or {}
    except ValueError:
        return {}


def git_blob_oid(content: bytes) -> str:
    """The git object id of a file, as the hub reports it for regular files."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


class FakeHubServer(LoopbackServer):
    """``files`` maps ``(repo_type, repo_id, path)`` to bytes; repo_type is "model" or
    "dataset". Commits change ``files`` in place; ``commits`` keeps each commit's summary
    and the paths it touched."""

    def __init__(self, files: dict[FileKey, bytes] | None = None, *, page_size: int = 1000,
                 fail_commits: int = 0) -> None:
        self.files: dict[FileKey, bytes] = {} if files is None else files
        self.repos: set[tuple[str, str]] = {(t, r) for t, r, _ in self.files}
        self.page_size = page_size
        self.fail_commits = fail_commits
        self.commits: list[Commit] = []
        self.requests: Counter[str] = Counter()
        self.authorization: set[str] = set()
        self._lock = threading.Lock()
        super().__init__()

    # --- routing -----------------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        url = urlparse(path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        with self._lock:
            self.requests[method] += 1
            if headers.get("Authorization"):
                self.authorization.add(headers["Authorization"])
            if parts[:1] == ["api"]:
                return self._api(method, parts[1:], parse_qs(url.query), body)
            return self._resolve(parts)

    def _resolve(self, parts: list[str]) -> Response:
        repo_type = "model"
        if parts and parts[0] == "datasets":
            repo_type, parts = "dataset", parts[1:]
        if "resolve" not in parts:
            return 404, "text/plain", b"Entry not found"
        at = parts.index("resolve")
        key = (repo_type, "/".join(parts[:at]), "/".join(parts[at + 2:]))
        if key not in self.files:  # a plain 404: the client then falls back to its cache
            return 404, "text/plain", b"Entry not found"
        return 200, "application/octet-stream", self.files[key]

    def _api(self, method: str, parts: list[str], query: dict[str, list[str]],
             body: bytes) -> Response:
        if parts == ["repos", "create"] and method == "POST":
            return self._create(body)
        if len(parts) < 5 or parts[0] not in ("models", "datasets", "spaces"):
            return 404, JSON, b'{"error": "no such endpoint"}'
        repo_type = parts[0].removesuffix("s")
        repo_id, action, rest = "/".join(parts[1:3]), parts[3], parts[4:]
        if (repo_type, repo_id) not in self.repos:
            return 404, JSON, b'{"error": "Repository not found"}', {
                "X-Error-Code": "RepoNotFound"}
        if action == "preupload" and method == "POST":
            return self._preupload(repo_type, repo_id, body)
        if action == "commit" and method == "POST":
            return self._commit(repo_type, repo_id, body)
        if action == "tree" and method == "GET":
            return self._tree(repo_type, repo_id, "/".join(rest[1:]), query)
        if action == "revision" and method == "GET":
            return self._revision(repo_type, repo_id)
        return 404, JSON, b'{"error": "no such endpoint"}'

    # --- endpoints ---------------------------------------------------------------------------

    def _create(self, body: bytes) -> Response:
        payload = _request_object(body)
        owner, repo, kind = (payload.get(k) for k in ("organization", "name", "type"))
        if not (isinstance(repo, str) and isinstance(owner, str | None)
                and isinstance(kind, str | None)):
            return _bad_request("'name' (and 'organization', 'type') must be strings")
        name = "/".join(p for p in (owner, repo) if p)
        key = (kind or "model", name)
        prefix = "" if key[0] == "model" else f"{key[0]}s/"
        url = f"{self.url}/{prefix}{name}"
        if key in self.repos:  # the hub names the existing repo, which the client returns
            return 409, JSON, json.dumps({"error": "You already created this repo",
                                          "url": url}).encode()
        self.repos.add(key)
        return 200, JSON, json.dumps({"url": url}).encode()

    def _preupload(self, repo_type: str, repo_id: str, body: bytes) -> Response:
        listed = _request_object(body).get("files")
        paths = [path for item in listed if isinstance(path := member(item, "path"), str)] \
            if isinstance(listed, list) else []
        if not isinstance(listed, list) or len(paths) < len(listed):
            return _bad_request("'files' must be a list of objects with a 'path'")
        files: list[JSONValue] = []
        for path in paths:
            stored = self.files.get((repo_type, repo_id, path))
            files.append({"path": path, "uploadMode": "regular", "shouldIgnore": False,
                          "oid": None if stored is None else git_blob_oid(stored)})
        return 200, JSON, json.dumps({"files": files}).encode()

    def _commit(self, repo_type: str, repo_id: str, body: bytes) -> Response:
        if self.fail_commits > 0:
            self.fail_commits -= 1
            return 503, JSON, b'{"error": "the hub is busy"}', {"Retry-After": "0"}
        summary, touched = "", []
        for line in body.splitlines():
            entry = json.loads(line)
            value = entry["value"]
            if entry["key"] == "header":
                summary = value["summary"]
            elif entry["key"] == "file":
                content = value["content"]
                data = (base64.b64decode(content) if value.get("encoding") == "base64"
                        else content.encode())
                self.files[(repo_type, repo_id, value["path"])] = data
                touched.append(value["path"])
            elif entry["key"] in ("deletedFile", "deletedFolder"):
                gone = value["path"].rstrip("/")
                for key in [k for k in self.files if k[:2] == (repo_type, repo_id) and (
                        k[2] == gone or k[2].startswith(gone + "/"))]:
                    del self.files[key]
                touched.append(f"-{gone}")
            else:  # lfsFile and others: this fake offers only regular uploads
                return 400, JSON, json.dumps({"error": f"unsupported {entry['key']}"}).encode()
        oid = hashlib.sha1(f"{len(self.commits)}:{summary}".encode()).hexdigest()
        self.commits.append(Commit(summary=summary, paths=touched, oid=oid))
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        return 200, JSON, json.dumps({"commitUrl": f"{self.url}/{prefix}{repo_id}/commit/{oid}",
                                      "commitOid": oid, "pullRequestUrl": None}).encode()

    def _tree(self, repo_type: str, repo_id: str, folder: str,
              query: dict[str, list[str]]) -> Response:
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        prefix = f"{folder}/" if folder else ""
        entries: dict[str, TreeEntry] = {}
        for (kind, repo, path), content in sorted(self.files.items()):
            if (kind, repo) != (repo_type, repo_id) or not path.startswith(prefix):
                continue
            rest = path[len(prefix):].split("/")
            for depth in range(1, len(rest)):  # the folders on the way
                sub = prefix + "/".join(rest[:depth])
                if recursive or depth == 1:
                    entries.setdefault(sub, {"type": "directory", "oid": COMMIT, "size": 0,
                                             "path": sub})
            if recursive or len(rest) == 1:
                entries[path] = {"type": "file", "oid": git_blob_oid(content),
                                 "size": len(content), "path": path}
        if folder and not entries:
            return 404, JSON, b'{"error": "Entry not found"}', {"X-Error-Code": "EntryNotFound"}
        listed = sorted(entries.values(), key=lambda e: e["path"])
        start = int(query.get("cursor", ["0"])[0])
        page = listed[start:start + self.page_size]
        extra = {}
        if start + self.page_size < len(listed):
            after = f"recursive={str(recursive).lower()}&cursor={start + self.page_size}"
            tail = f"/{folder}" if folder else ""
            base = f"{self.url}/api/{repo_type}s/{repo_id}/tree/main{tail}"
            extra["Link"] = f'<{base}?{after}>; rel="next"'
        return 200, JSON, json.dumps(page).encode(), extra

    def _revision(self, repo_type: str, repo_id: str) -> Response:
        sha = self.commits[-1]["oid"] if self.commits else COMMIT
        siblings = [{"rfilename": p} for t, r, p in sorted(self.files) if (t, r) == (
            repo_type, repo_id)]
        return 200, JSON, json.dumps({"id": repo_id, "sha": sha, "private": False,
                                      "siblings": siblings}).encode()

    # --- HTTP --------------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                status, content_type, payload, *extra = server.handle(
                    self.command, self.path, self.headers, body)
                payload = payload if isinstance(payload, bytes) else b"".join(payload)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                if status == 200 and "/resolve/" in self.path:
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("ETag", f'"{hashlib.sha256(payload).hexdigest()}"')
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_HEAD = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
