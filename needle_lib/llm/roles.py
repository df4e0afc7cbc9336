"""Hosted models that serve Needle itself (the relevance judge, the query-generation LLM).

Both normally run on OpenRouter, so a raw model id gets OpenRouter defaults (temperature 0,
the role's token budget and timeout, key from ``OPENROUTER_API_KEY``); the base URL can be
moved with the role's env var, so any OpenAI-compatible server (a local llama.cpp included)
can take the role. A name that is a model config (``configs/models/<name>.toml`` or a path)
is used as that config says. Precedence: explicit name > the role's env var > the default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from needle_lib.llm.config import ModelConfig, load_dotenv_once, resolve_model, sanitize_key
from needle_lib.paths import MODELS_DIR
from needle_lib.tomlconf import ConfigError

DEFAULT_MODEL = "openai/gpt-5.6-terra"
DEFAULT_BASE_URL = "https://openrouter.ai/api"
API_KEY_ENV = "OPENROUTER_API_KEY"


@dataclass(frozen=True)
class Role:
    label: str
    model_env: str
    base_url_env: str
    max_tokens: int
    timeout: float
    #: Variable that overrides ``max_tokens`` for a raw model id (a config file sets its own).
    max_tokens_env: str | None = None
    #: The option that picks the role's model (``--judge-model``), for errors.
    model_option: str | None = None

    def key_advice(self) -> str:
        """What a missing key's error suggests besides setting it: another model for the
        role (``--api-key`` sets the evaluated model's key, never the role's)."""
        options = " or ".join(o for o in (self.model_option, self.model_env) if o)
        return f"or name another {self.label} model config (a local server, say) with {options}"


def _env_max_tokens(role: Role, environ: Mapping[str, str]) -> int:
    raw = environ.get(role.max_tokens_env, "").strip() if role.max_tokens_env else ""
    if not raw:
        return role.max_tokens
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"environment variable {role.max_tokens_env} must be a positive integer, got {raw!r}"
        )
    return value


def role_model_config(
    role: Role,
    model: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    models_dir: Path | None = None,
) -> ModelConfig:
    """The role's ModelConfig. ``environ`` defaults to the process env after loading .env."""
    if environ is None:
        load_dotenv_once()
        environ = os.environ
    name = model or environ.get(role.model_env, "").strip() or DEFAULT_MODEL
    configured = resolve_model(name, models_dir=models_dir or MODELS_DIR)
    if configured.note is None:
        return configured
    base_url = environ.get(role.base_url_env, "").strip() or DEFAULT_BASE_URL
    if not re.match(r"https?://", base_url):
        raise ConfigError(
            f"environment variable {role.base_url_env} must start with http:// or https://, "
            f"got {base_url!r}"
        )
    return ModelConfig(
        name=name,
        label=name,
        key=sanitize_key(name),
        source=f"{role.label} model {name!r}",
        base_url=base_url,
        api_key_env=API_KEY_ENV,
        temperature=0.0,
        max_tokens=_env_max_tokens(role, environ),
        timeout=role.timeout,
        key_advice=role.key_advice(),
    )


#: Query projection for generated gold (finance filingdoc, legal code, scholar, news):
#: one short line or a small JSON object per call.
GENERATION = Role("generation LLM", "NEEDLE_LLM_MODEL", "NEEDLE_LLM_BASE_URL",
                  max_tokens=1024, timeout=60.0)


def generation_model_config(model: str | None = None, *,
                            environ: Mapping[str, str] | None = None) -> ModelConfig:
    return role_model_config(GENERATION, model, environ=environ)
