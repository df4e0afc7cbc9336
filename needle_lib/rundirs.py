"""Per-run scratch directories (``$TMPDIR/needle-run-*``), and sweeping up dead ones.

A run removes its directory when it ends, but ``kill -9`` (or a machine that loses power)
leaves it behind, and a busy CI runner collects hundreds. Each directory therefore records
the process that owns it; a new run removes every directory whose owner is gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

PREFIX = "needle-run-"
OWNER_FILE = "owner.pid"
#: A directory without an owner file (older Needle, or killed before writing it) is taken
#: as stale only when this old, so a run just starting is never swept away.
ORPHAN_AGE_S = 24 * 3600


def make_run_dir(parent: Path | None = None) -> Path:
    """A fresh run directory owned by this process, after sweeping stale ones."""
    parent = Path(parent or tempfile.gettempdir())
    clean_stale_run_dirs(parent)
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    (path / OWNER_FILE).write_text(str(os.getpid()), encoding="ascii")
    return path


def clean_stale_run_dirs(parent: Path, *, now: float | None = None) -> list[Path]:
    """Remove ``needle-run-*`` directories under ``parent`` whose owner process is dead
    (or, with no owner recorded, that are older than a day); returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    for path in parent.glob(f"{PREFIX}*"):
        try:
            if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
                continue
            if _is_stale(path, now):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except OSError:  # raced with its owner's own cleanup, or not ours to read
            continue
    return removed


def _is_stale(path: Path, now: float) -> bool:
    try:
        pid = int((path / OWNER_FILE).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return now - path.stat().st_mtime > ORPHAN_AGE_S
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
