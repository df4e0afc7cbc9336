"""Where the repository's data lives, so every module resolves paths the same way."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(os.environ.get("NEEDLE_ROOT", Path(__file__).resolve().parent.parent))
CONFIGS_DIR = REPO_ROOT / "configs"
CORPORA_DIR = CONFIGS_DIR / "corpora"
MODELS_DIR = CONFIGS_DIR / "models"
ENGINES_DIR = CONFIGS_DIR / "engines"
FIXTURES_DIR = REPO_ROOT / "fixtures"
EVALS_DIR = REPO_ROOT / "evals"
RESULTS_DIR = REPO_ROOT / "results"
CACHE_DIR = Path(os.environ.get("NEEDLE_CACHE_DIR", REPO_ROOT / ".needle-cache"))


def resolve_repo_path(value: str | Path) -> Path:
    """Resolve a config path: absolute as given, relative to the repo root otherwise."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path
