"""Reading a recall dump back from disk: one validating reader for every command.

``--resume``, ``--baseline``, ``--dump``, ``needle rescore``, ``merge``, ``status``,
``compare`` and the dashboards all trust a dump's shape once it is loaded. A file that is
valid JSON but not a dump (no ``outcome``, ``cases`` a string, a case that is a list) used
to end in a ``KeyError`` or ``TypeError`` traceback deep inside whichever command read it.
So every reader goes through here, and such a file is one ``DumpError`` naming the file,
the case and the first thing wrong. The checks cover what the readers rely on, not every
field a run writes: a dump from an older Needle still loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import RecallDump
from needle_lib.errors import UsageError

OUTCOMES = tuple(Outcome)
#: Scoring switches every dump records (the policy it was scored under).
SCORING_KEYS = ("count_comments", "relax_indent")
_SCORE_KEYS = ("matched", "scored", "hallucinated", "reindented", "bonus")
_Kind = type | tuple[type, ...]


class DumpError(UsageError, ValueError):
    """A file that claims to be a recall dump but does not follow the format."""


def read_results_json(path: Path) -> Any:
    """The JSON in ``path``; a broken or unreadable file raises DumpError naming it (with
    line and column for bad JSON)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DumpError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: "
                        f"{exc.msg}") from exc
    except RecursionError:
        raise DumpError(f"{path}: invalid JSON: nested too deeply to parse") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DumpError(f"{path}: cannot read: {exc}") from exc


def read_recall_dump(path: Path) -> RecallDump:
    """A recall dump from ``path``, checked (staleness and setup are the caller's call)."""
    dump = read_results_json(path)
    if isinstance(dump, dict) and dump.get("benchmark", "recall") != "recall":
        raise DumpError(f"{path}: not a recall dump (benchmark={dump.get('benchmark')!r})")
    return check_recall_dump(path, dump)


def require(mapping: Any, key: str, kind: _Kind, where: str) -> Any:
    """``mapping[key]``, which must exist and be a ``kind``; DumpError naming ``where``."""
    if not isinstance(mapping, dict) or key not in mapping:
        raise DumpError(f"{where}: missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise DumpError(f"{where}: key {key!r} should be {_names(kind)}, "
                        f"got {type(value).__name__}")
    return value


def _types(kind: _Kind) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind: _Kind) -> str:
    return "/".join("null" if k is type(None) else k.__name__ for k in _types(kind))


def check_recall_dump(path: Path, dump: Any) -> RecallDump:
    """``dump`` (read from ``path``) as a recall dump; DumpError naming file and case."""
    where = str(path)
    if not isinstance(dump, dict):
        raise DumpError(f"{where}: top level should be an object, got {type(dump).__name__}")
    for key in ("in_progress", "complete", "valid"):
        require(dump, key, bool, where)
    corpus = require(dump, "corpus", dict, where)
    for key in ("name", "sha256"):
        require(corpus, key, str, f"{where} corpus")
    require(require(dump, "model", dict, where), "key", str, f"{where} model")
    scoring = require(dump, "scoring", dict, where)
    for key in SCORING_KEYS:
        require(scoring, key, bool, f"{where} scoring")
    if "sampling" in dump:
        require(dump, "sampling", dict, where)
    if "summary" in dump:
        summary = require(dump, "summary", dict, where)
        if "matched_pct" in summary:
            require(summary, "matched_pct", (int, float, type(None)), f"{where} summary")
    if "shard" in dump:
        _check_shard(dump["shard"], f"{where} shard")
    cases = require(dump, "cases", list, where)
    for index, case in enumerate(cases):
        _check_case(case, f"{where} case {index}")
    return cast(RecallDump, dump)


def _check_case(case: Any, where: str) -> None:
    if not isinstance(case, dict):
        raise DumpError(f"{where}: should be an object, got {type(case).__name__}")
    case_id = require(case, "case_id", str, where)
    where = f"{where} ({case_id!r})"
    require(case, "function", str, where)
    require(case, "start_line", int, where)
    outcome = require(case, "outcome", str, where)
    if outcome not in OUTCOMES:
        raise DumpError(f"{where}: unknown outcome {outcome!r} (expected one of "
                        f"{', '.join(OUTCOMES)})")
    if "response" in case:
        require(case, "response", (str, type(None)), where)
    if outcome in (Outcome.PASSED, Outcome.FAILED):
        for key in _SCORE_KEYS:
            require(case, key, int, where)
        composition = require(case, "composition", dict, where)
        for part in ("code", "prose"):
            for key in ("matched", "total"):
                require(require(composition, part, dict, f"{where} composition"), key, int,
                        f"{where} composition.{part}")
        require(composition, "blank_skipped", int, f"{where} composition")


def _check_shard(shard: Any, where: str) -> None:
    """A ``--shard-by case`` part's shard: which of how many, and the cases it was given."""
    if not isinstance(shard, dict):
        raise DumpError(f"{where}: should be an object, got {type(shard).__name__}")
    for key in ("index", "count"):
        require(shard, key, int, where)
    require(shard, "by", str, where)
    for case_id in require(shard, "case_ids", list, where):
        if not isinstance(case_id, str):
            raise DumpError(f"{where}: case_ids should hold strings, got {case_id!r}"[:300])
