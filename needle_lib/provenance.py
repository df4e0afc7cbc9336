"""Which code produced a result (package version and git revision, recorded in every dump)
and where the bundled corpora came from (``fixtures/PROVENANCE.toml``)."""

from __future__ import annotations

import subprocess
import threading
from functools import cache

from needle_lib import __version__
from needle_lib.paths import FIXTURES_DIR, REPO_ROOT
from needle_lib.tomlconf import ConfigError, load_toml

PROVENANCE_FILE = FIXTURES_DIR / "PROVENANCE.toml"

_looking_up = threading.Lock()


def git_revision() -> str:
    """The checkout's commit, ``-dirty`` when tracked files changed, or ``unknown``."""
    with _looking_up:  # a lookup started early is waited for, never run twice
        return _git_revision()


def look_up_git_revision_early() -> None:
    """Run the lookup in the background: a run needs the revision for its first dump, and
    the two git processes (tens of milliseconds, more on a busy machine) can overlap the
    collection instead of delaying the first case."""
    threading.Thread(target=git_revision, name="needle-git-revision", daemon=True).start()


@cache
def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    ).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def package_info() -> dict[str, str]:
    return {"name": "needle-evals", "version": __version__, "git_revision": git_revision()}


def fixture_sources() -> dict[str, str]:
    """``fixtures/<path>`` → where the file came from and its license, for each file
    ``PROVENANCE.toml`` lists. Raises ConfigError naming the file if it cannot be read."""
    entries = load_toml(PROVENANCE_FILE).get("file", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{PROVENANCE_FILE}: 'file' must be an array of tables ([[file]])")
    return {f"{FIXTURES_DIR.name}/{entry['path']}":
            f"{entry.get('source', 'source not recorded')} "
            f"({entry.get('license', 'no license recorded')})"
            for entry in entries if isinstance(entry, dict) and "path" in entry}
