"""Which of the user's files a corpus may read: never through a link, never outside its tree.

A corpus is sent, whole, to a model server. A checkout or a corpus directory can hold a
symbolic link to anything (``helpers.py -> ~/.aws/credentials`` is valid Python, and git
stores it as mode 120000), and a glob or a tracked path under a symlinked directory reaches
outside the tree without a link of its own name. Following either would put the target
into every prompt. So a file is read only when no component of its path below the root is
a symlink and its real path is under the root's real path; every other file is left out,
with the reason, and the run says so (``Corpus.left_out``, the dump's ``corpus.left_out``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from needle_lib.contract.records import LeftOutFile

SYMLINK = "a symbolic link (never followed: its target may be outside the tree)"
UNDER_SYMLINK = "under a symbolically linked directory (never followed)"
OUTSIDE = "resolves outside the corpus tree"


@dataclass(frozen=True)
class LeftOut:
    """A file a corpus matched but did not read."""

    path: str  # as the listing named it: relative to the tree's root
    reason: str

    def describe(self) -> LeftOutFile:
        return {"path": self.path, "reason": self.reason}


def refusal(root: Path, relative: str) -> str | None:
    """Why the file ``relative`` (a path under ``root``) must not be read, or None.

    ``root`` is the tree the user named (a checkout's top level, a ``[files]`` directory);
    it may itself be reached through a link, since the user chose it."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or ".." in parts or PurePosixPath(relative).is_absolute():
        return OUTSIDE
    here = root
    for index, part in enumerate(parts):
        here = here / part
        if here.is_symlink():
            return SYMLINK if index == len(parts) - 1 else UNDER_SYMLINK
    try:
        here.resolve(strict=True).relative_to(root.resolve(strict=True))
    except (OSError, ValueError):
        return OUTSIDE
    return None


def confine(root: Path, names: Iterable[str]) -> tuple[list[str], list[LeftOut]]:
    """``names`` (relative to ``root``) split into those safe to read and those left out."""
    kept: list[str] = []
    left_out: list[LeftOut] = []
    for name in names:
        reason = refusal(root, name)
        if reason is None:
            kept.append(name)
        else:
            left_out.append(LeftOut(name, reason))
    return kept, left_out


def left_out_message(corpus: str, left_out: Iterable[LeftOut]) -> str | None:
    """The one line a run prints about files it refused to read (None when there are none)."""
    items = list(left_out)
    if not items:
        return None
    named = "; ".join(f"{item.path}: {item.reason}" for item in items[:10])
    more = f"; and {len(items) - 10} more (the dump's corpus.left_out lists them)" \
        if len(items) > 10 else ""
    return (f"{corpus}: left out {len(items)} file(s) that were not read or sent to the "
            f"model — {named}{more}")
