"""What ``--resume`` did, one line per recall pair or search bench, in one ``needle resume``
section of the terminal summary.

Recall and search say it in the same words, and say it when nothing was resumed too: a
run that quietly found no earlier run of its setup asks every case again, and the user
would otherwise only learn it from the bill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_notes_key = pytest.StashKey[list[str]]()


def resume_note(subject: str, source: Path | None, answered: int, looked_in: str) -> str:
    """The line for ``subject`` (a pair or a bench): the run it resumes, or where none was."""
    if source is not None:
        return (
            f"--resume: {subject}: reusing {answered} answered case(s) of {source}; "
            "the rest are asked"
        )
    return f"--resume: {subject}: no earlier run of this setup in {looked_in}; every case is asked"


def add_resume_note(config: pytest.Config, note: str) -> None:
    notes = config.stash.setdefault(_notes_key, [])
    if note not in notes:
        notes.append(note)


def write_resume_notes(config: pytest.Config, terminalreporter: Any) -> None:
    notes = config.stash.get(_notes_key, [])
    if notes:
        terminalreporter.section("needle resume")
        for note in notes:
            terminalreporter.write_line(note)
