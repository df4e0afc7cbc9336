"""The engine registry: the one place that knows every engine, built-in or from a config file.

Built-in engines are a module plus one ``EngineSpec`` entry here (``ENGINES``); config engines
are ``configs/engines/<name>.toml`` files (``engine_config``). ``known_engines`` lists both,
and ``make_engine`` builds either, resolving everything a client needs from the environment —
the key, the base URL override ``NEEDLE_<ENGINE>_BASE_URL`` (so tests and proxies can point an
engine at loopback) and env-tuned modes (``TAVILY_DEPTH``, ``SERPER_LOCALE``). A required
key (or, for a config engine without ``base_url``, the base URL) that is unset raises
``MissingAPIKey``, which callers turn into a SKIP naming the variable.

An env-tuned mode changes what the engine is asked (a tavily "advanced" run is another
setup than a "basic" one), so a run records it in its header (``tuned_modes``), and a mode
the engine does not know is one ``EngineModeError`` when the run is configured, naming the
variable and the allowed values, rather than an ERROR on every case of the engine.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from needle_lib.net.retry import RetryPolicy, Sleep
from needle_lib.paths import ENGINES_DIR, REPO_ROOT
from needle_lib.search.base import HttpSearchClient
from needle_lib.search.brave import BraveClient
from needle_lib.search.ceramic import CeramicClient
from needle_lib.search.configured import ConfigEngineClient
from needle_lib.search.engine_config import EngineDefinition, load_engine_definition
from needle_lib.search.exa import ExaClient
from needle_lib.search.keenable import KeenableClient
from needle_lib.search.octen import OctenClient
from needle_lib.search.parallel import ParallelClient
from needle_lib.search.perplexity import PerplexityClient
from needle_lib.search.prices import BUILT_IN_PRICES, Price
from needle_lib.search.searchapi import SearchApiBingClient
from needle_lib.search.serper import DEFAULT_LOCALE, LOCALE_ENV, SerperClient, locale_of
from needle_lib.search.tavily import DEFAULT_DEPTH, DEPTH_ENV, TavilyClient, depth_of
from needle_lib.search.types import MissingAPIKey, UnknownEngine
from needle_lib.search.you import YouClient
from needle_lib.tomlconf import ConfigError


class EngineModeError(ConfigError):
    """An env-tuned engine mode the engine does not know (``TAVILY_DEPTH=deep``)."""


@dataclass(frozen=True)
class EngineSpec:
    """How to build one named engine; ``mode_env`` (if set and non-empty) overrides ``mode``,
    checked and normalised by ``check_mode`` (ValueError naming the variable and the allowed
    values)."""

    name: str
    client: Callable[..., HttpSearchClient]
    #: The key's env var; None for an engine that takes no key.
    key_env: str | None
    key_optional: bool = False
    mode: str | None = None
    mode_env: str | None = None
    check_mode: Callable[[str], str] | None = None
    #: Seconds per request: research-style engines (parallel, perplexity) think before they
    #: answer, and cutting them off at the common 30 s would report a working engine as down.
    timeout: float = 30.0
    #: No default base URL (a self-hosted service): ``NEEDLE_<ENGINE>_BASE_URL`` must be set.
    base_url_required: bool = False
    #: "built-in", or the config file the engine comes from.
    source: str = "built-in"
    #: USD per 1,000 queries with its source and date; None = unknown (never shown as 0).
    price: Price | None = None

    @property
    def base_url_env(self) -> str:
        return f"NEEDLE_{self.name.upper().replace('-', '_')}_BASE_URL"


_SPECS = (
    EngineSpec("keenable", KeenableClient, "KEENABLE_API_KEY", key_optional=True, mode="pro"),
    EngineSpec(
        "keenable-realtime",
        KeenableClient,
        "KEENABLE_API_KEY",
        key_optional=True,
        mode="realtime",
    ),
    EngineSpec("exa", ExaClient, "EXA_API_KEY", mode="auto"),
    EngineSpec("exa-instant", ExaClient, "EXA_API_KEY", mode="instant"),
    EngineSpec("google", SerperClient, "SERPER_API_KEY", mode=DEFAULT_LOCALE,
               mode_env=LOCALE_ENV, check_mode=locale_of),
    EngineSpec("bing", SearchApiBingClient, "SEARCHAPI_API_KEY"),
    EngineSpec("brave", BraveClient, "BRAVE_API_KEY"),
    EngineSpec("parallel", ParallelClient, "PARALLEL_API_KEY", mode="basic", timeout=60.0),
    EngineSpec("parallel-turbo", ParallelClient, "PARALLEL_API_KEY", mode="turbo", timeout=60.0),
    EngineSpec("tavily", TavilyClient, "TAVILY_API_KEY", mode=DEFAULT_DEPTH, mode_env=DEPTH_ENV,
               check_mode=depth_of),
    EngineSpec("perplexity", PerplexityClient, "PERPLEXITY_API_KEY", timeout=60.0),
    EngineSpec("octen", OctenClient, "OCTEN_API_KEY"),
    EngineSpec("ceramic", CeramicClient, "CERAMIC_API_KEY"),
    EngineSpec("you", YouClient, "YOU_API_KEY"),
)

#: The built-in engines; ``known_engines()`` adds the config-defined ones.
ENGINES: dict[str, EngineSpec] = {
    spec.name: replace(spec, price=BUILT_IN_PRICES.get(spec.name)) for spec in _SPECS}


def config_spec(definition: EngineDefinition) -> EngineSpec:
    """The registry entry for a config-defined engine."""
    auth = definition.auth
    try:
        source = str(definition.source.resolve().relative_to(REPO_ROOT.resolve()))
    except ValueError:
        source = str(definition.source)
    return EngineSpec(
        name=definition.name,
        client=functools.partial(ConfigEngineClient, definition=definition),
        key_env=auth.key_env if auth else None,
        key_optional=auth.optional if auth else False,
        timeout=definition.timeout,
        base_url_required=definition.base_url is None,
        source=source,
        price=definition.price,
    )


def known_engines(directory: Path | None = None) -> dict[str, EngineSpec]:
    """Built-in engines, then every ``<directory>/*.toml`` engine (default ``configs/engines``).

    A config engine named like a built-in one is an error: one name must mean one engine in
    every run and report.
    """
    directory = ENGINES_DIR if directory is None else directory
    engines = dict(ENGINES)
    for path in sorted(directory.glob("*.toml")) if directory.is_dir() else ():
        definition = load_engine_definition(path)
        if definition.name in ENGINES:
            raise ConfigError(f"{path}: engine {definition.name!r} is a built-in engine; "
                              "rename the file")
        engines[definition.name] = config_spec(definition)
    return engines


def make_engine(
    name: str,
    *,
    snippet_chars: int = 2000,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    sleep: Sleep = asyncio.sleep,
    client: httpx.AsyncClient | None = None,
    env: Mapping[str, str] | None = None,
    engines: Mapping[str, EngineSpec] | None = None,
) -> HttpSearchClient:
    """Build the client for engine ``name`` from ``env`` (default: ``os.environ``).

    ``engines`` defaults to ``known_engines()``; ``timeout`` to the engine's own.
    Raises ``UnknownEngine`` (lists the known names), ``MissingAPIKey(engine, env_var)`` or
    ``EngineModeError``.
    """
    engines = known_engines() if engines is None else engines
    spec = engines.get(name)
    if spec is None:
        raise UnknownEngine(name, list(engines))
    env = os.environ if env is None else env
    missing = missing_setting(spec, env)
    if missing is not None:
        raise MissingAPIKey(spec.name, missing)
    api_key = (env.get(spec.key_env, "").strip() or None) if spec.key_env else None
    base_url = env.get(spec.base_url_env, "").strip() or None
    return spec.client(
        name=spec.name,
        api_key=api_key,
        base_url=base_url,
        mode=engine_mode(spec, env),
        snippet_chars=snippet_chars,
        timeout=timeout or spec.timeout,
        retry=retry,
        sleep=sleep,
        client=client,
    )


def missing_setting(spec: EngineSpec, env: Mapping[str, str]) -> str | None:
    """The variable ``spec`` needs and ``env`` lacks (its API key, or a self-hosted
    engine's base URL), or None when it has what it needs."""
    if spec.key_env and not spec.key_optional and not env.get(spec.key_env, "").strip():
        return spec.key_env
    if spec.base_url_required and not env.get(spec.base_url_env, "").strip():
        return spec.base_url_env
    return None


def engine_mode(spec: EngineSpec, env: Mapping[str, str]) -> str | None:
    """The mode ``spec`` runs in under ``env``: its ``mode_env`` value, checked and normalised,
    or its default. Raises ``EngineModeError`` naming the variable and the allowed values."""
    given = env.get(spec.mode_env, "").strip() if spec.mode_env else ""
    if not given:
        return spec.mode
    if spec.check_mode is None:
        return given
    try:
        return spec.check_mode(given)
    except ValueError as exc:
        raise EngineModeError(f"engine {spec.name}: {exc}") from None


def tuned_modes(engines: Iterable[str], known: Mapping[str, EngineSpec],
                env: Mapping[str, str]) -> dict[str, str]:
    """engine → mode, for each of ``engines`` whose mode the environment can change: what a
    run's header records (``engine_modes``). A mode fixed by the engine's name (exa-instant)
    is said by the name already. Raises ``EngineModeError`` for the first bad mode."""
    modes = {}
    for name in engines:
        spec = known[name]
        mode = engine_mode(spec, env) if spec.mode_env else None
        if mode is not None:
            modes[name] = mode
    return modes
