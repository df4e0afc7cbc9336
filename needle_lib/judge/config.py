"""Which model judges, and how it is reached: ``--judge-model`` > ``NEEDLE_JUDGE_MODEL`` >
the default, on OpenRouter unless ``NEEDLE_JUDGE_BASE_URL`` says otherwise (see
``needle_lib.llm.roles``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from needle_lib.llm import ModelConfig
from needle_lib.llm.roles import DEFAULT_BASE_URL, DEFAULT_MODEL, Role, role_model_config

DEFAULT_JUDGE_MODEL = DEFAULT_MODEL
MODEL_ENV = "NEEDLE_JUDGE_MODEL"
BASE_URL_ENV = "NEEDLE_JUDGE_BASE_URL"
#: A verdict is one short JSON object; a small budget bounds cost when a model rambles.
DEFAULT_JUDGE_BASE_URL = DEFAULT_BASE_URL
JUDGE_MAX_TOKENS = 400
JUDGE_TIMEOUT_S = 60.0
JUDGE = Role("judge", MODEL_ENV, BASE_URL_ENV, max_tokens=JUDGE_MAX_TOKENS,
             timeout=JUDGE_TIMEOUT_S)


def judge_model_config(
    model: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    models_dir: Path | None = None,
) -> ModelConfig:
    """The judge's ModelConfig. ``environ`` defaults to the process env after loading .env."""
    return role_model_config(JUDGE, model, environ=environ, models_dir=models_dir)
