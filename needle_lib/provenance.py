"""Which code produced a result: package version and git revision, recorded in every dump."""

from __future__ import annotations

import subprocess
from functools import cache

from needle_lib import __version__
from needle_lib.paths import REPO_ROOT


@cache
def git_revision() -> str:
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
