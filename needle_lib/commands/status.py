"""`needle status`: which (corpus, model) runs are missing, unfinished, invalid or stale,
and the command that completes each."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from needle_lib.contract.dumpfiles import DumpError, check_recall_dump, read_results_json
from needle_lib.llm.config import resolve_model, sanitize_key
from needle_lib.paths import MODELS_DIR, RESULTS_DIR
from needle_lib.recall.corpus import configured_corpus_names
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.score import SCORER_VERSION
from needle_lib.recall.store import ResultStore, pair_name


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
    if not path.is_file():
        return "missing", ""
    try:
        data = read_results_json(path)
        if isinstance(data, dict) and (data.get("prompt_version"), data.get(
                "scorer_version")) != (PROMPT_VERSION, SCORER_VERSION):
            # an older Needle's dump: its shape may differ too; what matters is re-running
            return "stale", (f"prompt {data.get('prompt_version')} / scorer "
                             f"{data.get('scorer_version')}; current {PROMPT_VERSION} / "
                             f"{SCORER_VERSION}")
        dump = check_recall_dump(path, data)
    except DumpError as exc:
        return "unreadable", str(exc)
    summary = dump.get("summary", {})
    counts = (f"{summary.get('cases', 0)}/{summary.get('expected', '?')} cases, "
              f"{summary.get('errors', 0)} errors, {summary.get('skipped', 0)} skipped")
    if dump.get("in_progress"):
        return "in progress", counts
    if not dump.get("valid", False):
        return "invalid", counts
    if not dump.get("complete", False):
        return "incomplete", counts
    return "complete", (f"matched {summary.get('matched_pct')}%, "
                        f"pass rate {summary.get('pass_rate')}%")


def completion_command(corpus: str, model: str, state: str) -> str:
    # names come from configs and the command line: quoted, a pasted command runs as shown
    base = f"uv run pytest evals --corpus {shlex.quote(corpus)} --model {shlex.quote(model)}"
    if state in ("in progress", "incomplete", "invalid"):
        return base + " --resume"
    return base


def _dump_keys(values: list[str]) -> list[tuple[str, str]]:
    """(the name as given, the key its dumps are filed under) per ``--model`` value:
    ``configs/x.toml``, ``x`` and a raw id resolve exactly as a run resolves them."""
    if not values:
        return [(p.stem, sanitize_key(p.stem)) for p in sorted(MODELS_DIR.glob("*.toml"))]
    return [(value, resolve_model(value).key) for value in values]


def run(args: argparse.Namespace) -> int:
    rows = []
    store = ResultStore(args.results)
    for corpus in configured_corpus_names():
        for model, key in _dump_keys(args.model):
            state, detail = dump_state(store.latest_path(pair_name(corpus, key)))
            rows.append((corpus, key, model, state, detail))
    width = max(len(f"{c}__{k}") for c, k, _, _, _ in rows)
    for corpus, key, model, state, detail in rows:
        line = f"{corpus + '__' + key:<{width}}  {state:<11}  {detail}"
        print(line.rstrip())
        if state != "complete":
            print(f"{'':<{width}}  → {completion_command(corpus, model, state)}")
    return 0
