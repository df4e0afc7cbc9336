"""Model configs: ``configs/models/<name>.toml`` layered over built-in defaults and CLI flags.

A model is named on the command line either by a config (path or stem under
``configs/models``) or by a raw server model id. Configs exist because servers and models
need different knobs (token field, stop sequences, thinking switches); a raw id still works
with defaults so trying a freshly downloaded model needs no file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import msgspec
from dotenv import load_dotenv

from needle_lib.contract.records import ModelRequest
from needle_lib.names import safe_file_name
from needle_lib.net.body import MAX_TIMEOUT_S
from needle_lib.paths import MODELS_DIR, REPO_ROOT, resolve_repo_path
from needle_lib.tomlconf import ConfigError, Key, check_section, load_toml

#: base_url of the in-process oracle model (see ``needle_lib.llm.reference``).
REFERENCE_BASE_URL = "builtin:reference"

FILE_SCHEMA: dict[str, Key] = {
    "name": Key((str,), required=True),
    "label": Key((str,)),
    "base_url": Key((str,)),
    "api_key": Key((str,)),
    "api_key_file": Key((str,)),
    "api_key_env": Key((str,)),
    "temperature": Key((float,)),
    "max_tokens": Key((int,)),
    "use_max_completion_tokens": Key((bool,)),
    "reasoning_effort": Key((str,)),
    "prefill_no_think": Key((bool,)),
    "suppress_thinking": Key((bool,)),
    "stop": Key((list,)),
    "timeout": Key((float,)),
    "concurrency": Key((int,)),
    "max_answer_bytes": Key((int,)),
    "context_tokens": Key((int,)),
}

#: CLI overrides: any file key except ``name``, plus ``think`` (leave chain-of-thought on).
OVERRIDE_SCHEMA: dict[str, Key] = {
    **{k: v for k, v in FILE_SCHEMA.items() if k != "name"},
    "think": Key((bool,)),
}
_OVERRIDES_WHERE = Path("model overrides")

class ModelSettings(TypedDict, total=False):
    """What the built-in defaults, a config file and CLI flags set, layered in that order
    (``FILE_SCHEMA``'s keys), and the identity ``resolve_model`` adds: ``ModelConfig``'s
    fields, checked (``_check_values``) before a config is built from them."""

    name: str
    label: str
    key: str
    source: str
    base_url: str
    api_key: str | None
    api_key_file: str | None
    api_key_env: str | None
    temperature: float
    max_tokens: int
    use_max_completion_tokens: bool
    reasoning_effort: str | None
    prefill_no_think: bool
    suppress_thinking: bool
    stop: tuple[str, ...]
    timeout: float
    concurrency: int
    max_answer_bytes: int
    context_tokens: int | None


class ModelOverrides(ModelSettings, total=False):
    """CLI flags: the settings, and ``think`` (undo both thinking switches)."""

    think: bool


DEFAULTS: ModelSettings = {
    "base_url": "http://localhost:1234",
    "api_key": None,
    "api_key_file": None,
    "api_key_env": None,
    "temperature": 0.0,
    "max_tokens": 6000,
    "use_max_completion_tokens": False,
    "reasoning_effort": None,
    "prefill_no_think": False,
    "suppress_thinking": False,
    "stop": (),
    "timeout": 600.0,
    "concurrency": 1,
    "max_answer_bytes": 8 * 1024 * 1024,
}

_loaded_env_files: set[Path] = set()
NO_DOTENV_ENV = "NEEDLE_NO_DOTENV"


def load_dotenv_once(paths: Iterable[Path] | None = None) -> None:
    """Load ``./.env`` then ``<repo root>/.env`` (each once per process).

    Exported variables always win (``override=False``): a key set in the shell for one run
    must not be silently replaced by a stale value in a file. ``NEEDLE_NO_DOTENV=1`` skips
    the default files, so a test suite (or a CI job) runs the same whatever a developer's
    ``.env`` holds.
    """
    if paths is None and os.environ.get(NO_DOTENV_ENV):
        return
    candidates = list(paths) if paths is not None else [Path.cwd() / ".env", REPO_ROOT / ".env"]
    for path in candidates:
        resolved = path.resolve()
        if resolved in _loaded_env_files:
            continue
        _loaded_env_files.add(resolved)
        if resolved.is_file():
            load_dotenv(resolved, override=False)


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to talk to one model. The API key itself is never part of repr."""

    name: str
    label: str
    key: str
    source: str
    base_url: str = DEFAULTS["base_url"]
    api_key: str | None = field(default=None, repr=False)
    api_key_file: str | None = None
    api_key_env: str | None = None
    temperature: float = DEFAULTS["temperature"]
    max_tokens: int = DEFAULTS["max_tokens"]
    use_max_completion_tokens: bool = False
    reasoning_effort: str | None = None
    prefill_no_think: bool = False
    suppress_thinking: bool = False
    stop: tuple[str, ...] = ()
    timeout: float = DEFAULTS["timeout"]
    #: Requests of one (corpus, model) pair in flight at once from one process. It changes
    #: throughput, never an answer, so results (and --resume) ignore it.
    concurrency: int = DEFAULTS["concurrency"]
    #: Bytes of (decoded) response body kept per attempt; a larger answer keeps its head
    #: and is flagged ``answer_truncated_by_needle``. Bookkeeping, like ``concurrency``.
    max_answer_bytes: int = DEFAULTS["max_answer_bytes"]
    #: The model's context window in tokens, when the config says: ``--repo`` sizes its
    #: corpus to fit it. It changes which text is asked about, not how, so the request
    #: shape leaves it out (the corpus hash records the text).
    context_tokens: int | None = None
    #: Set when the model was not found as a config; callers print it so typos are visible.
    note: str | None = field(default=None, compare=False)
    #: How else a missing key can be given, for the error: ``--api-key`` sets the key of the
    #: models under evaluation, never the judge's or the generation LLM's.
    key_advice: str = field(default="or pass --api-key", compare=False)

    @property
    def is_reference(self) -> bool:
        return self.base_url == REFERENCE_BASE_URL

    @property
    def token_field(self) -> str:
        """OpenAI's newer models refuse ``max_tokens`` and want ``max_completion_tokens``."""
        return "max_completion_tokens" if self.use_max_completion_tokens else "max_tokens"

    def resolve_api_key(self) -> str | None:
        """The key to send as a Bearer token: literal (``--api-key``), else the first of the
        key file and the env var that holds one, else None when the config names no source.

        Keys live in files or the environment rather than in configs so configs can be
        committed; a config may name both (a file for a workstation, a variable for CI), and
        the error when neither holds a key names every place looked, never a value.
        """
        if self.api_key is not None:
            return self.api_key
        tried: list[str] = []
        if self.api_key_file is not None:
            path = resolve_repo_path(self.api_key_file)
            try:
                key = path.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                tried.append(f"api_key_file {path} does not exist")
            except OSError as exc:
                tried.append(
                    f"api_key_file {path} cannot be read ({exc.strerror or type(exc).__name__})"
                )
            else:
                if key:
                    return key
                tried.append(f"api_key_file {path} is empty")
        if self.api_key_env is not None:
            load_dotenv_once()
            key = os.environ.get(self.api_key_env, "").strip()
            if key:
                return key
            tried.append(f"environment variable {self.api_key_env} (api_key_env) is not set")
        if not tried:
            return None
        raise ConfigError(
            f"{self.source}: no API key: {'; '.join(tried)}. Put the key in "
            f"{' or '.join(self._key_places())}, {self.key_advice}"
        )

    def _key_places(self) -> list[str]:
        places = []
        if self.api_key_file is not None:
            places.append(self.api_key_file)
        if self.api_key_env is not None:
            places.append(f"{self.api_key_env} (exported or in .env)")
        return places

    def request_shape(self) -> ModelRequest:
        """What determines the request, for result records: never the key or its contents."""
        sources = [f"file:{self.api_key_file}"] if self.api_key_file is not None else []
        sources += [f"env:{self.api_key_env}"] if self.api_key_env is not None else []
        auth = "literal" if self.api_key is not None else " or ".join(sources) or "none"
        return {
            "model": self.name,
            "label": self.label,
            "config": self.key,
            "source": self.source,
            "base_url": self.base_url,
            "auth": auth,
            "temperature": self.temperature,
            "token_field": self.token_field,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
            "prefill_no_think": self.prefill_no_think,
            "suppress_thinking": self.suppress_thinking,
            "stop": list(self.stop),
            "timeout": self.timeout,
            "concurrency": self.concurrency,
        }


def sanitize_key(raw: str) -> str:
    """A file-name-safe key for a raw model id (``qwen/qwen3-4b`` → ``qwen_qwen3-4b``),
    capped in length (a 300-character id ends in a hash of the whole)."""
    return safe_file_name(raw)


def check_distinct_keys(models: Iterable[ModelConfig]) -> None:
    """Two models whose keys coincide (``a/b`` and ``a:b`` → ``a_b``) would share one dump
    and one test id: a usage error naming both, before anything runs."""
    seen: dict[str, ModelConfig] = {}
    for model in models:
        other = seen.setdefault(model.key, model)
        if (other.name, other.source) != (model.name, model.source):
            raise ConfigError(
                f"models {other.name!r} ({other.source}) and {model.name!r} ({model.source}) "
                f"both file their results as {model.key!r}: give one a config file with a "
                "distinct name"
            )


def _check_values(data: Mapping[str, Any], where: Path) -> ModelOverrides:
    """Value checks the type schema cannot express; errors name the file and key.

    ``data`` has passed ``check_section`` (each key holds its schema's type), so the
    conversion to ``ModelOverrides`` at the end only changes ``stop``'s list to a tuple
    and an integer temperature or timeout to a float."""
    out = dict(data)
    stop = out.get("stop")
    if stop is not None:
        bad = [s for s in stop if not isinstance(s, str) or not s]
        if bad:
            raise ConfigError(
                f"{where}: key 'stop' must be a list of non-empty strings, got {bad[0]!r}"
            )
    if "max_tokens" in out and out["max_tokens"] < 1:
        raise ConfigError(f"{where}: key 'max_tokens' must be at least 1, got {out['max_tokens']}")
    if "concurrency" in out and out["concurrency"] < 1:
        raise ConfigError(
            f"{where}: key 'concurrency' must be at least 1, got {out['concurrency']}"
        )
    if "max_answer_bytes" in out and out["max_answer_bytes"] < 1024:
        raise ConfigError(
            f"{where}: key 'max_answer_bytes' must be at least 1024, got {out['max_answer_bytes']}"
        )
    if "timeout" in out and out["timeout"] <= 0:
        raise ConfigError(f"{where}: key 'timeout' must be positive, got {out['timeout']}")
    if "timeout" in out and out["timeout"] > MAX_TIMEOUT_S:
        raise ConfigError(f"{where}: key 'timeout' must be at most {MAX_TIMEOUT_S:g} seconds "
                          f"(a day), got {out['timeout']:g}")
    if "temperature" in out and out["temperature"] < 0:
        raise ConfigError(f"{where}: key 'temperature' must be >= 0, got {out['temperature']}")
    base_url = out.get("base_url")
    if (
        base_url is not None
        and base_url != REFERENCE_BASE_URL
        and not re.match(r"https?://", base_url)
    ):
        raise ConfigError(
            f"{where}: key 'base_url' must start with http:// or https:// "
            f"(or be {REFERENCE_BASE_URL!r}), got {base_url!r}"
        )
    return msgspec.convert(out, ModelOverrides)


def _load_file(path: Path) -> ModelSettings:
    data = check_section(load_toml(path), FILE_SCHEMA, path=path)
    return _check_values(data, path)


def _apply_overrides(values: ModelSettings, overrides: Mapping[str, Any]) -> None:
    """Layer CLI flags over the config; None means "flag not given"."""
    flags = {k: v for k, v in overrides.items() if v is not None}
    given = _check_values(
        check_section(flags, OVERRIDE_SCHEMA, path=_OVERRIDES_WHERE), _OVERRIDES_WHERE
    )
    if given.pop("think", False):
        # Thinking is suppressed by two independent switches; --think must undo both.
        values["suppress_thinking"] = False
        values["prefill_no_think"] = False
    values.update(given)


def _is_file(path: Path) -> bool:
    """``Path.is_file`` for a name that may be a raw model id too long to be a file name."""
    try:
        return path.is_file()
    except OSError:
        return False


def likely_typo(value: str, known: Iterable[str]) -> str | None:
    """The config ``value`` was probably meant to name: one edit (or one swap of neighbours)
    away, or the same but for case and ``_``/``-``. A raw id that close to a shipped config
    is far likelier a typo than a model, and failing before the run beats a connection
    error at its end. One digit for another is a sibling model (``gpt-5.4``, ``qwen3-8b``),
    never a typo."""
    folded = value.lower().replace("_", "-")
    for name in known:
        if folded == name.lower().replace("_", "-"):
            return name
        if one_edit_apart(value, name) and not _other_digit(value, name):
            return name
    return None


def one_edit_apart(a: str, b: str) -> bool:
    """Whether one insertion, deletion, substitution or swap of neighbours turns ``a`` into
    ``b`` (an optimal-string-alignment distance of exactly 1). Written out rather than
    imported: the string-distance library costs every run with a raw model id 40 ms of
    start-up for one comparison per config."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    start = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    if len(a) != len(b):  # the rest of the longer one, past the difference, is the shorter's
        longer, shorter = (a, b) if len(a) > len(b) else (b, a)
        return longer[start + 1 :] == shorter[start:]
    if a[start + 1 :] == b[start + 1 :]:
        return True
    return (
        start + 1 < len(a)
        and a[start] == b[start + 1]
        and a[start + 1] == b[start]
        and a[start + 2 :] == b[start + 2 :]
    )


def _other_digit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ in exactly one place, a digit for a digit."""
    if len(a) != len(b):
        return False
    diffs = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return len(diffs) == 1 and diffs[0][0].isdigit() and diffs[0][1].isdigit()


def resolve_model(
    value: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    models_dir: Path = MODELS_DIR,
) -> ModelConfig:
    """Resolve a ``--model`` value: a config file path, a config stem, or a raw model id.

    Layering, later wins: built-in defaults, then the config file, then ``overrides``.
    A raw id gets ``note`` set so the caller can tell the user no config was used.
    """
    values = DEFAULTS.copy()
    candidate = Path(value).expanduser()
    named = models_dir / f"{value}.toml"
    note = None
    if value.endswith(".toml") or _is_file(candidate):
        path = candidate if _is_file(candidate) else resolve_repo_path(value)
        values.update(_load_file(path))
        values.setdefault("label", path.stem)
        values.update({"key": sanitize_key(path.stem), "source": f"file:{path}"})
    elif _is_file(named):
        values.update(_load_file(named))
        values.setdefault("label", value)
        values.update({"key": sanitize_key(value), "source": f"file:{named}"})
    else:
        known = sorted(p.stem for p in models_dir.glob("*.toml")) if models_dir.is_dir() else []
        close = likely_typo(value, known)
        if close:
            raise ConfigError(
                f"model {value!r}: no config of that name; did you mean {close}? (a raw model "
                f"id one edit away from a config is taken for a typo: to send it as a server "
                f"model id, write {models_dir / (sanitize_key(value) + '.toml')} naming it)"
            )
        note = (
            f"no config for {value!r} in {models_dir}: using it as a raw model id with built-in "
            f"defaults (known configs: {', '.join(known) or 'none'})"
        )
        values.update({"name": value, "label": value, "key": sanitize_key(value),
                       "source": "raw"})
    _apply_overrides(values, overrides or {})
    return ModelConfig(**values, note=note)
