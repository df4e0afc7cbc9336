"""Which model judges, and how it is reached: ``--judge-model`` > env > default.

The judge normally runs on OpenRouter, so a raw model id gets OpenRouter defaults tuned for a
short JSON answer (temperature 0, a small token budget, a one-minute timeout). A name that is
a model config (``configs/models/<name>.toml`` or a path) is used as that config says, so a
local or differently hosted judge needs no code change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from needle_lib.llm import ModelConfig, load_dotenv_once, resolve_model
from needle_lib.llm.config import sanitize_key
from needle_lib.paths import MODELS_DIR
from needle_lib.tomlconf import ConfigError

DEFAULT_JUDGE_MODEL = "openai/gpt-5.6-terra"
DEFAULT_JUDGE_BASE_URL = "https://openrouter.ai/api"
MODEL_ENV = "NEEDLE_JUDGE_MODEL"
BASE_URL_ENV = "NEEDLE_JUDGE_BASE_URL"
API_KEY_ENV = "OPENROUTER_API_KEY"
#: A verdict is one short JSON object; a small budget bounds cost when a model rambles.
JUDGE_MAX_TOKENS = 400
JUDGE_TIMEOUT_S = 60.0


def judge_model_config(
    model: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    models_dir: Path | None = None,
) -> ModelConfig:
    """The judge's ModelConfig. ``environ`` defaults to the process env after loading .env."""
    if environ is None:
        load_dotenv_once()
        environ = os.environ
    name = model or environ.get(MODEL_ENV, "").strip() or DEFAULT_JUDGE_MODEL
    configured = resolve_model(name, models_dir=models_dir or MODELS_DIR)
    if configured.note is None:
        return configured
    base_url = environ.get(BASE_URL_ENV, "").strip() or DEFAULT_JUDGE_BASE_URL
    if not re.match(r"https?://", base_url):
        raise ConfigError(
            f"environment variable {BASE_URL_ENV} must start with http:// or https://, "
            f"got {base_url!r}"
        )
    return ModelConfig(
        name=name,
        label=name,
        key=sanitize_key(name),
        source=f"judge model {name!r}",
        base_url=base_url,
        api_key_env=API_KEY_ENV,
        temperature=0.0,
        max_tokens=JUDGE_MAX_TOKENS,
        timeout=JUDGE_TIMEOUT_S,
    )
