"""Names made from text Needle did not write: test ids, file names, output paths.

Query ids come from a ``--queries`` file anyone can hand you, model ids and corpus names
from configs and history files. Such text must never reach a place where it is code or a
path: pytest-html renders test ids as HTML, a file name with ``/`` or ``..`` escapes its
directory, one longer than the file system allows ends the run with ``File name too
long``. So:

- ``id_part`` keeps a name that is already plain (``jquery``, ``qwen36-35b``), and turns
  anything else into a readable slug plus a short hash of the original: stable (same text,
  same id) and still distinct for texts that slug alike (``a/b`` vs ``a:b``);
- ``query_label`` reads like the query (``best-hiking-boots-3f2a``), hashed by its id;
- ``safe_file_name`` caps a name, hashing the tail it drops;
- ``inside`` builds a path under a root and refuses one that would leave it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from needle_lib.errors import UsageError

_PLAIN = re.compile(r"^[A-Za-z0-9_$][A-Za-z0-9._$-]*$")
_NON_SLUG = re.compile(r"[^a-z0-9]+")
#: A generated id: a bare hash, or ``benches.rows.query_id``'s hash + UTC hour.
_HEXISH = re.compile(r"^[0-9a-fA-F]{8,}(_\d{4}-\d{2}-\d{2}T\d{2})?$")
#: Longest id part / file name Needle makes (file systems allow 255 bytes; dump names add
#: a corpus, a stamp and a suffix around the model key).
MAX_PART = 64
MAX_FILE_NAME = 120
QUERY_SLUG_CHARS = 40


def short_hash(text: str, chars: int = 4) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def slug(text: str, max_chars: int = QUERY_SLUG_CHARS) -> str:
    """Lowercase words joined by ``-``, cut at a word boundary where possible."""
    words = _NON_SLUG.sub("-", text.lower()).strip("-")
    if len(words) > max_chars:
        cut = words[:max_chars]
        words = cut.rsplit("-", 1)[0] if "-" in cut[max_chars // 2:] else cut
    return words.strip("-")


def is_plain(text: str, max_chars: int = MAX_PART) -> bool:
    """Safe as it is in a test id, a file name and an HTML attribute."""
    return len(text) <= max_chars and bool(_PLAIN.match(text)) and ".." not in text


def id_part(text: str, max_chars: int = MAX_PART) -> str:
    """``text`` when plain, else a slug of it plus a short hash of the original."""
    if is_plain(text, max_chars):
        return text
    head = slug(text, max_chars - 9) or "x"
    return f"{head}-{short_hash(text, 8)}"


def query_label(text: str, key: str, hash_chars: int = 4) -> str:
    """A test-id piece a person can read: the query's slug plus a short hash of its id."""
    return f"{slug(text) or 'query'}-{short_hash(key, hash_chars)}"


def is_readable_id(key: str) -> bool:
    """A query id a person chose (``q-ticker``): plain, short, with a letter, and not a
    generated hash (``a428ca756e0f``, ``13bb12bda9111a55_2026-12-03T10``) or a bare
    number."""
    return (is_plain(key, QUERY_SLUG_CHARS) and any(c.isalpha() for c in key)
            and not _HEXISH.match(key))


def unique_query_labels(queries: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The query's piece of each test id, per (key, text): a readable id as it is (so
    ``-k q-ticker`` selects it), else ``query_label``; unique across the set, since keys
    whose labels collide get a longer hash (12 hex digits) and ids never depend on order."""
    pairs = list(queries)
    short = {key: key if is_readable_id(key) else query_label(text, key) for key, text in pairs}
    counts: dict[str, int] = {}
    for label in short.values():
        counts[label] = counts.get(label, 0) + 1
    return {key: label if counts[label] == 1 else query_label(text, key, 12)
            for (key, text), label in zip(pairs, short.values(), strict=True)}


def safe_file_name(name: str, max_chars: int = MAX_FILE_NAME) -> str:
    """A file-name-safe ``name`` (no separators, no ``..``), at most ``max_chars`` long:
    a longer one keeps its head and ends in a hash of the whole."""
    clean = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".-") or "_"
    clean = clean.replace("..", "_.")
    if len(clean) <= max_chars:
        return clean
    return f"{clean[: max_chars - 13]}-{short_hash(name, 12)}"


class UnsafePath(UsageError, ValueError):
    """A name would place an output outside its root directory."""


def inside(root: Path, relative: str | Path) -> Path:
    """``root / relative``, refusing any path that resolves outside ``root``."""
    path = root / relative
    resolved_root = root.resolve()
    resolved = path.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise UnsafePath(f"refusing to write {str(relative)!r}: it resolves outside "
                         f"{root} (a name with '..' or '/'?)")
    return path
