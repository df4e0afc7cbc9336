"""Every dump records the code that produced it: the package version and git revision."""

from __future__ import annotations

import subprocess
import threading

import pytest

from needle_lib import provenance
from needle_lib.paths import REPO_ROOT
from needle_lib.tomlconf import ConfigError


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


def test_a_provenance_file_whose_entries_are_not_tables_is_named(tmp_path, monkeypatch) -> None:
    bad = tmp_path / "PROVENANCE.toml"
    bad.write_text('file = ["jquery.js"]\n', encoding="utf-8")
    monkeypatch.setattr(provenance, "PROVENANCE_FILE", bad)
    with pytest.raises(ConfigError, match=r"PROVENANCE.toml: 'file' must be an array of tables"):
        provenance.fixture_sources()
