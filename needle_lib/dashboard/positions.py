"""Where each novel target sits in each corpus size, read from ``fixtures/novel/manifest.json``.

The novel corpora place the same 18 targets at matched relative depths while distractor
volume grows, so depth × context length is a paired picture only when a run's corpus is the
exact text the manifest describes; the sha256 check enforces that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from needle_lib.recall.novel import MANIFEST, NOVEL_DIR

DEFAULT_MANIFEST = NOVEL_DIR / MANIFEST
DEPTH_BINS = 10


@dataclass(frozen=True)
class NovelSize:
    """One corpus size: its hash, the context it is made for, its longest prompt under the
    reference tokenizer, and each target's relative depth."""

    corpus: str
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
        return {
            name: NovelSize(
                corpus=name,
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


def depth_bin(position: float, bins: int = DEPTH_BINS) -> int:
    """Index of the equal-width depth bin holding ``position`` (0 = top of the context)."""
    return min(int(position * bins), bins - 1)


def bin_label(index: int, bins: int = DEPTH_BINS) -> str:
    return f"{100 * index // bins}–{100 * (index + 1) // bins} %"
