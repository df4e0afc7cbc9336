"""Where each novel target sits in each corpus size, read from each flavour's manifest
(``fixtures/novel/manifest.json``, ``fixtures/novel_ts/manifest.json``).

The novel corpora place the same 18 targets at matched relative depths while distractor
volume grows, so depth × context length is a paired picture only when a run's corpus is the
exact text the manifest describes; the sha256 check enforces that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from needle_lib.recall.novel import FLAVOURS, MANIFEST, NOVEL_DIR

DEFAULT_MANIFEST = NOVEL_DIR / MANIFEST
#: Every shipped flavour's manifest: the depth pages chart whichever novel corpora were run.
SHIPPED_MANIFESTS = tuple(flavour.directory / MANIFEST for flavour in FLAVOURS.values())
DEPTH_BINS = 10


@dataclass(frozen=True)
class NovelSize:
    """One corpus size: its hash, the context it is made for, its longest prompt under the
    reference tokenizer, and each target's relative depth."""

    corpus: str
    flavour: str  # the language the corpus is written in: one depth map per flavour
    sha256: str
    context_tokens: int
    prompt_tokens: int
    tokenizer: str
    positions: dict[str, float]


def load_manifest(path: Path = DEFAULT_MANIFEST) -> dict[str, NovelSize]:
    """Corpus name → NovelSize; a broken manifest raises ValueError naming the file and key."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        reference = str(data["reference_tokenizer"])
        flavour = str(data.get("flavour", "python"))  # manifests before flavours were Python
        return {
            name: NovelSize(
                corpus=name,
                flavour=flavour,
                sha256=entry["sha256"],
                context_tokens=int(entry["context_tokens"]),
                prompt_tokens=int(entry["prompt_tokens"][reference]["max"]),
                tokenizer=reference,
                positions={t["name"]: float(t["relative_position"]) for t in entry["targets"]},
            )
            for name, entry in data["corpora"].items()
        }
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the novel manifest: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: malformed novel manifest (key {exc})") from exc


def load_manifests(paths: Sequence[Path] = SHIPPED_MANIFESTS) -> dict[str, NovelSize]:
    """Corpus name → NovelSize over several manifests (a missing file contributes nothing)."""
    return {name: size for path in paths if path.exists()
            for name, size in load_manifest(path).items()}


def depth_bin(position: float, bins: int = DEPTH_BINS) -> int:
    """Index of the equal-width depth bin holding ``position`` (0 = top of the context)."""
    return min(int(position * bins), bins - 1)


def bin_label(index: int, bins: int = DEPTH_BINS) -> str:
    return f"{100 * index // bins}–{100 * (index + 1) // bins} %"
