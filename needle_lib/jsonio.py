"""JSON values as a type, and atomic JSON files: a reader (or a crash) never sees half a
file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol, TypeAlias, runtime_checkable

RESULT_FILE_MODE = 0o644

#: Any JSON value, as ``json.loads`` returns it. For payloads whose shape another party
#: decides (servers, source APIs, request bodies we send): unlike ``Any``, a value must be
#: narrowed (``isinstance``) before it is indexed or used, so a server that sends a string
#: where an object was documented is an error we handle, not a ``TypeError`` deep inside.
JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"
#: A JSON object.
JSONObject: TypeAlias = "dict[str, JSON]"


def json_object(value: object) -> JSONObject | None:
    """``value`` if it is a JSON object, else None (the usual first narrowing)."""
    return value if isinstance(value, dict) else None


@runtime_checkable
class EncodedList(Protocol):
    """A list whose items are already JSON text (a report table spooled while its run went
    on): written as the list it stands for, by copying."""

    def __len__(self) -> int: ...

    def encoded(self) -> Iterator[str]: ...


def write_json_atomic(
    path: Path, data: Any, *, indent: int | None = None, durable: bool = True
) -> None:
    """Write to a temp file in the same directory, fsync, then rename over ``path``.

    Rename is atomic on POSIX, so after a crash or ``kill -9`` the file holds either the
    previous complete version or the new one. ``indent=None`` keeps json's C encoder: dumps
    are rewritten after every case, and the pure-Python indenting encoder made that
    rewrite the largest per-case cost of a run. ``durable=False`` skips the fsync (see
    ``atomic_text_file``).
    """
    write_text_atomic(
        path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n", durable=durable
    )


def write_json_by_line_atomic(path: Path, data: Mapping[str, Any]) -> None:
    """``data`` with one top-level key per line and a list value one item per line.

    For large reports (a 20,000-case search run): each value goes through json's C encoder
    (``indent`` would switch to the pure-Python one, seconds per run) and is written as it
    is encoded, so the whole file never sits in memory as one string; a line per case still
    reads and diffs well.
    """
    with atomic_text_file(path) as fh:
        fh.write("{")
        for index, (key, value) in enumerate(data.items()):
            fh.write(("\n" if index == 0 else ",\n") + json.dumps(key) + ": ")
            if isinstance(value, list | EncodedList) and len(value):
                items = value.encoded() if isinstance(value, EncodedList) else (
                    json.dumps(item, ensure_ascii=False) for item in value)
                fh.write("[")
                for position, item in enumerate(items):
                    fh.write(("\n  " if position == 0 else ",\n  ") + item)
                fh.write("\n ]")
            else:
                write_json_in_pieces(fh, value)
        fh.write("\n}\n")


def write_json_in_pieces(fh: IO[str], value: Any, depth: int = 3) -> None:
    """``json.dumps(value, ensure_ascii=False)``, the same text, written an item at a time
    down to ``depth`` levels of objects and arrays: a report's per-engine, per-query table
    is as large as its cases, and as one string it was the largest allocation of a
    20,000-case run's end."""
    if depth and isinstance(value, dict) and value \
            and all(isinstance(key, str) for key in value):
        fh.write("{")
        for index, (key, item) in enumerate(value.items()):
            fh.write(("" if index == 0 else ", ") + json.dumps(key, ensure_ascii=False) + ": ")
            write_json_in_pieces(fh, item, depth - 1)
        fh.write("}")
    elif depth and isinstance(value, list) and value:
        fh.write("[")
        for index, item in enumerate(value):
            if index:
                fh.write(", ")
            write_json_in_pieces(fh, item, depth - 1)
        fh.write("]")
    elif isinstance(value, EncodedList):
        fh.write("[")
        for index, item in enumerate(value.encoded()):
            fh.write(item if index == 0 else ", " + item)
        fh.write("]")
    else:
        fh.write(json.dumps(value, ensure_ascii=False))


def write_text_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """``write_json_atomic`` for text already serialised (e.g. JSON Lines)."""
    with atomic_text_file(path, durable=durable) as fh:
        fh.write(text)


@contextmanager
def atomic_text_file(path: Path, *, durable: bool = True) -> Iterator[IO[str]]:
    """A file to write ``path``'s new content to; it replaces ``path`` when the block ends
    (fsynced), and is removed if the block fails.

    ``durable=False`` renames without the fsync, for a file rewritten often whose next
    durable version follows (a dump in progress): a killed process still leaves the old
    or the new content whole (the page cache outlives the process), and only a machine
    crash can lose the version, as it can lose the cases that were running. An fsync per
    rewrite cost a run a few milliseconds per case on an idle disk and tens on a busy one.

    The file is made 0644 like any file written with ``open``: results are shared (a
    colleague reads them, a web server publishes them), and the temp file's private 0600
    would otherwise survive the rename.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, RESULT_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        name_the_file(exc, path)
        raise


def name_the_file(exc: BaseException, path: Path | str) -> None:
    """Make ``exc`` name ``path`` if it is an ``OSError`` that names no file: a failed
    ``write`` or ``flush`` (a full disk) does not say which file it was writing, and the
    message a user gets must (``needle_lib.diskfull``)."""
    if isinstance(exc, OSError) and exc.filename is None:
        exc.filename = str(path)


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
