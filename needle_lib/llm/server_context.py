"""Ask a model server what context it serves, so a ``--repo`` corpus is sized to the model.

A raw model id carries no ``context_tokens``, and guessing 32K hurts both ways: an 8K
server overflows on every case, a 128K server is asked about a quarter of what it holds.
Local servers say what they loaded, each in its own place:

- llama.cpp ``GET /props``: ``default_generation_settings.n_ctx`` (per slot, the limit a
  request meets); its ``GET /v1/models`` lists ``meta.n_ctx_train``, the model's maximum;
- vLLM ``GET /v1/models``: ``data[].max_model_len``, the limit it enforces;
- LM Studio ``GET /api/v0/models``: ``loaded_context_length`` of a loaded model, and
  ``max_context_length``, the model's maximum (what a just-in-time load may get is LM
  Studio's own default, so the maximum only caps the budget);
- Ollama ``POST /api/show``: a ``num_ctx`` line in ``parameters`` (what the model runs
  with), and ``model_info["<arch>.context_length"]``, the model's maximum.

The probe is cheap and never fatal: short GETs (a POST for Ollama) with a short timeout,
stopped at the first that names a loaded context (one request for vLLM, two for
llama.cpp) and abandoned at the first transport failure; nothing is retried. A server
that says nothing keeps the default budget. The answers are plain JSON so the controller
can hand them to xdist workers: every worker then sizes the corpus identically, with one
probe per server per run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

import httpx

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.llm.config import ModelConfig
from needle_lib.tomlconf import ConfigError

#: Seconds each probe request may take: a local server answers its metadata at once, and
#: a slow answer is not worth delaying the run for (the default budget then applies).
PROBE_TIMEOUT_S = 2.0


class ServerContextJSON(TypedDict):
    """``ServerContext`` as it travels to xdist workers (``workerinput`` takes JSON)."""

    loaded: int | None
    maximum: int | None
    source: str
    maximum_source: str


@dataclass(frozen=True)
class ServerContext:
    """What a server said about one model's context, in tokens, and where it said it."""

    #: The context a request meets now (loaded / enforced); None when not reported.
    loaded: int | None
    #: The model's own maximum (trained context); a ceiling, not what is loaded.
    maximum: int | None
    #: Where the number that matters came from, e.g. ``llama.cpp GET /props n_ctx``.
    source: str
    #: Where ``maximum`` came from.
    maximum_source: str = ""

    def to_json(self) -> ServerContextJSON:
        return ServerContextJSON(loaded=self.loaded, maximum=self.maximum, source=self.source,
                                 maximum_source=self.maximum_source)

    @classmethod
    def from_json(cls, data: ServerContextJSON) -> ServerContext:
        return cls(**data)


def _positive(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entry(data: JSON, name: str) -> JSONObject | None:
    """The ``data[]`` entry of an OpenAI-style listing whose id is ``name`` (or the only
    entry, as a single-model server lists under a file name the user never typed)."""
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    entries = [e for e in listed if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == name]
    if named:
        return named[0]
    return entries[0] if len(entries) == 1 else None


def _llama_props(data: JSON, name: str) -> tuple[int | None, int | None]:
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    return (_positive(settings.get("n_ctx")) if isinstance(settings, dict) else None), None


def _openai_models(data: JSON, name: str) -> tuple[int | None, int | None]:
    entry = _entry(data, name) or {}
    meta = entry.get("meta")
    trained = _positive(meta.get("n_ctx_train")) if isinstance(meta, dict) else None
    return _positive(entry.get("max_model_len")), trained


def _lmstudio_models(data: JSON, name: str) -> tuple[int | None, int | None]:
    entry = _entry(data, name) or {}
    loaded = entry.get("loaded_context_length") if entry.get("state") == "loaded" else None
    return _positive(loaded), _positive(entry.get("max_context_length"))


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.M)


def _ollama_show(data: JSON, name: str) -> tuple[int | None, int | None]:
    if not isinstance(data, dict):
        return None, None
    parameters = data.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    info = data.get("model_info")
    maximum = None
    if isinstance(info, dict):
        maximum = next((_positive(v) for k, v in info.items()
                        if str(k).endswith(".context_length") and _positive(v)), None)
    return (int(match.group(1)) if match else None), maximum


Reader = Callable[[JSON, str], tuple[int | None, int | None]]
#: (method, path, reader, what the loaded number is called, what the maximum is called).
#: ``/v1/models`` first: every OpenAI-compatible server serves it, vLLM's answer is
#: complete, and llama.cpp's carries the model's maximum that ``/props`` lacks.
_PROBES: tuple[tuple[str, str, Reader, str, str], ...] = (
    ("GET", "/v1/models", _openai_models, "vLLM GET /v1/models max_model_len",
     "llama.cpp GET /v1/models meta.n_ctx_train (the model's maximum)"),
    ("GET", "/props", _llama_props, "llama.cpp GET /props default_generation_settings.n_ctx",
     ""),
    ("GET", "/api/v0/models", _lmstudio_models,
     "LM Studio GET /api/v0/models loaded_context_length",
     "LM Studio GET /api/v0/models max_context_length (the model's maximum)"),
    ("POST", "/api/show", _ollama_show, "Ollama POST /api/show num_ctx",
     "Ollama POST /api/show model_info context_length (the model's maximum)"),
)


def server_root(base_url: str) -> str:
    """The server's origin path: ``base_url`` without a trailing ``/v1``."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


#: (base URL, model name) → the answer: a process asks each server once.
_ASKED: dict[tuple[str, str], ServerContext | None] = {}


def probe_context(model: ModelConfig, *, timeout: float = PROBE_TIMEOUT_S) -> ServerContext | None:
    """What ``model``'s server reports about its context, or None when it reports nothing
    (or cannot be asked: the built-in reference, a missing key, a server that is down).
    Asked once per process for each (server, model)."""
    key = (model.base_url, model.name)
    if key not in _ASKED:
        _ASKED[key] = _probe(model, timeout)
    return _ASKED[key]


def _probe(model: ModelConfig, timeout: float) -> ServerContext | None:
    if model.is_reference:
        return None
    try:
        key = model.resolve_api_key()
    except ConfigError:
        return None  # the run says so itself, on its first request
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    root = server_root(model.base_url)
    maximum: tuple[int, str] | None = None
    try:
        with httpx.Client(timeout=timeout, headers=headers, follow_redirects=False) as http:
            for method, path, read, loaded_name, maximum_name in _PROBES:
                body = {"model": model.name} if method == "POST" else None
                response = http.request(method, root + path, json=body)
                if not response.is_success:
                    continue
                try:
                    data = response.json()
                except ValueError:
                    continue  # a web UI's page, not an API answer
                loaded, most = read(data, model.name)
                if most is not None and maximum is None:
                    maximum = (most, maximum_name)
                if loaded is not None:
                    return ServerContext(
                        loaded, maximum[0] if maximum else None, f"{loaded_name} at {root}",
                        f"{maximum[1]} at {root}" if maximum else "")
    except (httpx.HTTPError, OSError):
        pass  # down, slow or not HTTP: the preflight reports it properly
    if maximum is None:
        return None
    where = f"{maximum[1]} at {root}"
    return ServerContext(None, maximum[0], where, where)
