"""Atomic JSON files: a reader (or a crash) never sees half a file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

RESULT_FILE_MODE = 0o644


def write_json_atomic(path: Path, data: Any, *, indent: int | None = None) -> None:
    """Write to a temp file in the same directory, fsync, then rename over ``path``.

    Rename is atomic on POSIX, so after a crash or ``kill -9`` the file holds either the
    previous complete version or the new one. ``indent=None`` keeps json's C encoder: dumps
    are rewritten after every case, and the pure-Python indenting encoder made that
    rewrite the largest per-case cost of a run.
    """
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """``write_json_atomic`` for text already serialised (e.g. JSON Lines).

    The file is made 0644 like any file written with ``open``: results are shared (a
    colleague reads them, a web server publishes them), and the temp file's private 0600
    would otherwise survive the rename.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, RESULT_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def loads_untrusted(text: str | bytes) -> Any:
    """``json.loads`` for text a server or a file sent us: nesting deeper than Python's
    recursion limit (``[[[…]]]`` 200k deep) is a ``ValueError`` like any other bad JSON,
    not a ``RecursionError`` that escapes every handler and aborts the run."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to parse") from None
