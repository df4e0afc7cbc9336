"""Every dump records the code that produced it: the package version and git revision."""

from __future__ import annotations

import subprocess
import threading

from needle_lib import provenance
from needle_lib.paths import REPO_ROOT


def test_a_lookup_started_early_gives_every_caller_the_checkouts_revision() -> None:
    """The plugin starts the lookup at configure; callers that come while it runs wait for
    it, and all of them get the commit git names."""
    provenance._git_revision.cache_clear()
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    provenance.look_up_git_revision_early()
    seen: list[str] = []
    callers = [
        threading.Thread(target=lambda: seen.append(provenance.git_revision())) for _ in range(3)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(set(seen)) == 1 and seen[0].removesuffix("-dirty") == head
    assert provenance._git_revision.cache_info().misses == 1  # git ran once
    assert provenance.package_info()["git_revision"] == seen[0]
