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
MAX_TOKENS_ENV = "NEEDLE_JUDGE_MAX_TOKENS"
DEFAULT_JUDGE_BASE_URL = DEFAULT_BASE_URL
#: The default judge is a reasoning model: its budget covers the hidden reasoning as well as
#: the short JSON verdict, and a budget that cuts reasoning off yields no verdict at all.
#: Only generated tokens are billed, so a generous ceiling costs nothing when unused.
JUDGE_MAX_TOKENS = 32768
#: Long enough for a reasoning model to think through a verdict before answering.
JUDGE_TIMEOUT_S = 180.0
JUDGE = Role("judge", MODEL_ENV, BASE_URL_ENV, max_tokens=JUDGE_MAX_TOKENS,
             timeout=JUDGE_TIMEOUT_S, max_tokens_env=MAX_TOKENS_ENV,
             model_option="--judge-model")


def judge_model_config(
    model: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    models_dir: Path | None = None,
) -> ModelConfig:
    """The judge's ModelConfig. ``environ`` defaults to the process env after loading .env."""
    return role_model_config(JUDGE, model, environ=environ, models_dir=models_dir)
