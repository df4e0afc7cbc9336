"""`needle status`: which (corpus, model) runs are missing, unfinished, invalid or stale,
and the command that completes each.

The rows are every configured corpus × model, plus every pair the results directory holds
that is not one of them: a run of a raw model id (``--model fake-mixed``), of ``--repo`` or
``--file``, or of a config since removed. Those exist only as dumps, so each dump says how
to run its pair again."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from needle_lib.contract.records import RecallDump
from needle_lib.contract.schema import SchemaError, validate_recall_dump
from needle_lib.jsonio import json_object
from needle_lib.llm.config import resolve_model, sanitize_key
from needle_lib.paths import MODELS_DIR, RESULTS_DIR
from needle_lib.recall.corpus import configured_corpus_names
from needle_lib.recall.journal import read_dump
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.score import SCORER_VERSION
from needle_lib.recall.store import RUNS_DIR, ResultStore, pair_name
from needle_lib.report.terminal import effective_length_section


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("status", help="state of every configured corpus × model run")
    parser.add_argument("--model", action="append", default=[],
                        help="model config name, config path or raw id, resolved as "
                        "`pytest evals --model` does (repeatable; default: every config)")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR,
                        help=f"directory of the recall dumps (default: {RESULTS_DIR})")
    parser.set_defaults(func=run)


def dump_state(path: Path) -> tuple[str, str]:
    """(state, detail) of one dump file; states in order of what a user must do."""
    state, detail, _ = read_dump_state(path)
    return state, detail


def read_dump_state(path: Path) -> tuple[str, str, RecallDump | None]:
    """(state, detail, the dump) of one dump file; no dump when it is missing, stale or
    unreadable."""
    if not path.is_file():
        return "missing", "", None
    try:
        data = read_dump(path)
        if isinstance(data, dict) and (data.get("prompt_version"), data.get(
                "scorer_version")) != (PROMPT_VERSION, SCORER_VERSION):
            # an older Needle's dump: its shape may differ too; what matters is re-running
            return "stale", (f"prompt {data.get('prompt_version')} / scorer "
                             f"{data.get('scorer_version')}; current {PROMPT_VERSION} / "
                             f"{SCORER_VERSION}"), None
        dump = validate_recall_dump(path, data)
    except SchemaError as exc:
        return "unreadable", str(exc), None
    summary = dump.get("summary", {})
    counts = (f"{summary.get('cases', 0)}/{summary.get('expected', '?')} cases, "
              f"{summary.get('errors', 0)} errors, {summary.get('skipped', 0)} skipped")
    if dump.get("in_progress"):
        return "in progress", counts, dump
    if not dump.get("valid", False):
        return "invalid", counts, dump
    if not dump.get("complete", False):
        return "incomplete", counts, dump
    return "complete", (f"matched {summary.get('matched_pct')}%, "
                        f"pass rate {summary.get('pass_rate')}%"), dump


def completion_command(corpus: str, model: str, state: str, source: str = "") -> str:
    """The command that (re)runs the pair; ``source`` is the dump's corpus config, which
    says how a corpus without a config (``repo:PATH``, ``file:PATH``) was made."""
    # names come from configs and the command line: quoted, a pasted command runs as shown
    kind, _, path = source.partition(":")
    selection = (f"--{kind} {shlex.quote(path)}" if kind in ("repo", "file") and path
                 else f"--corpus {shlex.quote(corpus)}")
    base = f"uv run pytest evals {selection} --model {shlex.quote(model)}"
    if state in ("in progress", "incomplete", "invalid"):
        return base + " --resume"
    return base


def stored_pairs(store: ResultStore) -> list[str]:
    """Every pair the store holds a dump of: latest views and run directories."""
    views = {path.stem for path in store.root.glob("*.json") if "__" in path.stem}
    runs = store.root / RUNS_DIR
    dirs = {path.name for path in runs.iterdir() if path.is_dir()} if runs.is_dir() else set()
    return sorted(views | dirs)


def _stored_row(store: ResultStore, pair: str) -> tuple[str, str, str, Path, str] | None:
    """(corpus, model key, model as --model takes it, dump path, corpus source) of a stored
    pair, read from its newest dump; None when no dump of it can be read."""
    view = store.latest_path(pair)
    runs = store.runs(pair)
    path = view if view.is_file() else (runs[0] if runs else view)
    try:
        data = read_dump(path)
    except SchemaError:
        data = None
    # read as it stands (a dump of any version, or not one): only what names the pair
    model = json_object(data.get("model")) if isinstance(data, dict) else None
    if model is None:
        name, _, key = pair.partition("__")
        return name, key, key, path, ""
    block = json_object(data.get("corpus")) or {}
    raw = (json_object(model.get("request")) or {}).get("source") == "raw"
    key = str(model.get("key", pair.partition("__")[2]))
    return (str(block.get("name", pair.partition("__")[0])), key,
            str(model.get("name", key)) if raw else key, path, str(block.get("config", "")))


def _dump_keys(values: list[str]) -> list[tuple[str, str]]:
    """(the name as given, the key its dumps are filed under) per ``--model`` value:
    ``configs/x.toml``, ``x`` and a raw id resolve exactly as a run resolves them."""
    if not values:
        return [(p.stem, sanitize_key(p.stem)) for p in sorted(MODELS_DIR.glob("*.toml"))]
    return [(value, resolve_model(value).key) for value in values]


def run(args: argparse.Namespace) -> int:
    rows = []
    dumps: list[RecallDump] = []
    store = ResultStore(args.results)
    keys = _dump_keys(args.model)
    listed: set[str] = set()
    for corpus in configured_corpus_names():
        for model, key in keys:
            pair = pair_name(corpus, key)
            listed.add(pair)
            state, detail, dump = read_dump_state(store.latest_path(pair))
            rows.append((pair, corpus, model, state, detail, ""))
            dumps += [dump] if dump is not None else []
    wanted = {key for _, key in keys} if args.model else None
    for pair in stored_pairs(store):
        found = _stored_row(store, pair) if pair not in listed else None
        if found is None or (wanted is not None and found[1] not in wanted):
            continue
        corpus, _key, model, path, source = found
        state, detail, dump = read_dump_state(path)
        rows.append((pair, corpus, model, state, detail, source))
        dumps += [dump] if dump is not None else []
    width = max(len(row[0]) for row in rows)
    for pair, corpus, model, state, detail, source in rows:
        line = f"{pair:<{width}}  {state:<11}  {detail}"
        print(line.rstrip())
        if state != "complete":
            print(f"{'':<{width}}  → {completion_command(corpus, model, state, source)}")
    section = effective_length_section(dumps)
    if section:
        print()
        print("\n".join(section))
    return 0
