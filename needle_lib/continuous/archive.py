"""The run archive: each published run's full artifacts in a Hugging Face dataset repository.

Layout: ``runs/<bench>/<run_id>/<file>`` (the run report, its journal while in flight, the
query file and the pytest-html report, under their own names) and ``daily_queries.jsonl``
at the root. Why a dataset repository: anyone can reuse the runs (``hf_hub_download``, the
``datasets`` library, plain HTTPS) without the history branch, and the history can be
rebuilt from it (``needle publish --backfill``).

Uploads are idempotent: one commit per publish adds the runs' files and deletes only files
left in *those runs'* folders by an earlier publish of the same run, so a re-published run
replaces its own files and nothing else. Every hub call goes through the shared retry
policy (``needle_lib.net.retry``): 429 and 5xx answers and transport failures are retried
with its backoff (a hub ``Retry-After`` wins), anything else fails at once with the hub's
message. The token comes from ``HF_TOKEN``; ``HF_ENDPOINT`` points the client at another
hub (a mirror, or the loopback fake tests use). ``huggingface_hub`` is the optional ``hub``
extra.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from needle_lib.continuous.artifacts import run_artifacts
from needle_lib.continuous.daily import DAILY_FILE
from needle_lib.continuous.runs import PublishedRun
from needle_lib.extras import require_extra
from needle_lib.net.retry import Attempts, RetryPolicy, parse_retry_after
from needle_lib.tomlconf import ConfigError

RUNS_ROOT = "runs"
REPO_TYPE = "dataset"
TOKEN_ENV = "HF_TOKEN"
ENDPOINT_ENV = "HF_ENDPOINT"
PUBLIC_HUB = "https://huggingface.co"
T = TypeVar("T")


class ArchiveError(ConfigError):
    """The hub refused or kept failing; the message says which call and why."""


def run_folder(run: PublishedRun) -> str:
    return f"{RUNS_ROOT}/{run.bench}/{run.run_id}"


def file_url(repo: str, path: str, endpoint: str | None = None) -> str:
    """Where an archived file can be downloaded (for links on the site)."""
    return f"{(endpoint or PUBLIC_HUB).rstrip('/')}/datasets/{repo}/resolve/main/{path}"


@dataclass(frozen=True)
class Uploaded:
    commit: str  # the hub's head after the commit (unchanged files are not re-sent)
    added: list[str]
    deleted: list[str]


class Archive:
    """One dataset repository on one hub, with the retry policy around every call."""

    def __init__(self, repo: str, *, env: Mapping[str, str] | None = None,
                 policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        env = os.environ if env is None else env
        token = env.get(TOKEN_ENV, "").strip()
        if not token:
            raise ArchiveError(f"the archive needs a Hugging Face token in {TOKEN_ENV}")
        self.hub = require_extra("huggingface_hub", "hub", "needle publish --hub")
        self.repo = repo
        self.endpoint = env.get(ENDPOINT_ENV, "").strip().rstrip("/") or None
        self.api = self.hub.HfApi(endpoint=self.endpoint, token=token)
        self.policy = policy or RetryPolicy()
        self.sleep = sleep

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """``call()`` under the retry policy; a final failure names the call and the hub's
        answer (never the token)."""
        attempts = Attempts(self.policy)
        while True:
            attempts.start()
            try:
                return call()
            except httpx.TransportError as exc:
                delay = attempts.after(exc)
                problem = f"{type(exc).__name__}: {exc}"
            except self.hub.errors.HfHubHTTPError as exc:
                response = exc.response
                status = response.status_code if response is not None else 0
                delay = attempts.next_delay(
                    retryable=self.policy.retryable_status(status),
                    retry_after=parse_retry_after(
                        response.headers.get("Retry-After") if response is not None else None))
                problem = f"HTTP {status}: {str(exc).splitlines()[0][:200]}"
            if delay is None:
                raise ArchiveError(f"hub {what} for {self.repo} failed after "
                                   f"{attempts.attempt} attempt(s): {problem}") from None
            self.sleep(delay)

    def _files_under(self, folder: str) -> list[str]:
        """Paths of the files under ``folder`` (none when the folder does not exist)."""
        def listing() -> list[str]:
            try:
                return [entry.path for entry in self.api.list_repo_tree(
                    self.repo, path_in_repo=folder, recursive=True, repo_type=REPO_TYPE)
                    if entry.__class__.__name__ == "RepoFile"]
            except (self.hub.errors.EntryNotFoundError,
                    self.hub.errors.RemoteEntryNotFoundError):
                return []
        return self._call(f"listing of {folder}", listing)

    def upload(self, runs: list[PublishedRun], daily: str) -> Uploaded:
        """One commit: every run's artifacts, stale files of those runs removed, and the
        rolling query window at the root."""
        hub = self.hub
        self._call("repository check", lambda: self.api.create_repo(
            self.repo, repo_type=REPO_TYPE, exist_ok=True))
        added: dict[str, bytes] = {}
        for run in runs:
            for path in run_artifacts(run).files:
                added[f"{run_folder(run)}/{path.name}"] = path.read_bytes()
        added[DAILY_FILE] = daily.encode("utf-8")
        stale = [path for run in runs for path in self._files_under(run_folder(run))
                 if path not in added]
        operations: list[Any] = [hub.CommitOperationAdd(path_in_repo=path, path_or_fileobj=data)
                                 for path, data in added.items()]
        operations += [hub.CommitOperationDelete(path_in_repo=path) for path in stale]
        names = ", ".join(f"{run.bench} {run.run_id}" for run in runs) or "query window"
        info = self._call("commit", lambda: self.api.create_commit(
            self.repo, operations=_fresh(hub, operations), repo_type=REPO_TYPE,
            commit_message=f"needle publish: {names}"[:200]))
        return Uploaded(str(info.oid), sorted(added), sorted(stale))

    def archived_files(self) -> list[str]:
        """Every file under ``runs/`` (the client follows the hub's pagination)."""
        return self._files_under(RUNS_ROOT)

    def download(self, paths: list[str], into: Path) -> dict[str, Path]:
        """Download archived files into ``into`` (no shared cache: a backfill reads the
        archive as it is now)."""
        def fetch(path: str) -> Path:
            return Path(self.hub.hf_hub_download(
                self.repo, path, repo_type=REPO_TYPE, endpoint=self.endpoint,
                token=self.api.token, cache_dir=into / ".cache", local_dir=into))
        return {path: self._call(f"download of {path}", functools.partial(fetch, path))
                for path in paths}


def _fresh(hub: Any, operations: list[Any]) -> list[Any]:
    """Commit operations are single-use in huggingface_hub: a retried commit needs copies."""
    fresh = []
    for op in operations:
        if isinstance(op, hub.CommitOperationAdd):
            fresh.append(hub.CommitOperationAdd(path_in_repo=op.path_in_repo,
                                                path_or_fileobj=op.path_or_fileobj))
        else:
            fresh.append(hub.CommitOperationDelete(path_in_repo=op.path_in_repo))
    return fresh
