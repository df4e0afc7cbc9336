"""`needle engines [--check]`: which search engines exist, whether they are configured, and
(with ``--check``) whether each one answers a real query.

Prints only whether a key variable is set — never its value — so the output is safe to paste.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping

from needle_lib.search.check import CHECK_QUERY, CHECK_RESULTS, check_engines
from needle_lib.search.registry import EngineModeError, EngineSpec, engine_mode, known_engines
from needle_lib.tomlconf import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engines", help="list search engines and their keys; --check sends one query to each"
    )
    parser.add_argument("--check", action="store_true",
                        help="send one real query to each selected engine whose key is set; "
                             "exit 1 if any fails")
    parser.add_argument("--engines", default=None,
                        help="comma-separated engines to list or check (default: all)")
    parser.add_argument("--query", default=CHECK_QUERY, help="the --check query")
    parser.add_argument("--num-results", type=int, default=CHECK_RESULTS,
                        help="results asked for by --check")
    parser.set_defaults(func=run)


def engine_rows(env: Mapping[str, str], engines: Mapping[str, EngineSpec] | None = None,
                ) -> list[tuple[str, str, str, str, str]]:
    """(engine, mode, source, key env var, status) per engine, in registry order."""
    engines = known_engines() if engines is None else engines
    return [
        (spec.name, _mode(spec, env), spec.source, spec.key_env or "-", _status(spec, env))
        for spec in engines.values()
    ]


def _mode(spec: EngineSpec, env: Mapping[str, str]) -> str:
    try:
        return engine_mode(spec, env) or "-"
    except EngineModeError:  # listed as given, marked: a run refuses it when it starts
        return f"{env.get(spec.mode_env or '', '').strip()} (invalid)"


def _status(spec: EngineSpec, env: Mapping[str, str]) -> str:
    if spec.key_env is None:
        status = "not needed"
    elif env.get(spec.key_env, "").strip():
        status = "set"
    elif spec.key_optional:
        status = "unset (optional: keyless endpoint)"
    else:
        status = "unset"
    if spec.base_url_required and not env.get(spec.base_url_env, "").strip():
        status += f"; {spec.base_url_env} unset"
    return status


def selected(value: str | None, engines: Mapping[str, EngineSpec]) -> list[str]:
    """The ``--engines`` names (all when None); an unknown name is an error listing the known."""
    if value is None:
        return list(engines)
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise ConfigError("--engines: no engine named")
    unknown = [name for name in names if name not in engines]
    if unknown:
        raise ConfigError(f"--engines: unknown engine(s) {', '.join(unknown)}; "
                          f"known: {', '.join(engines)}")
    return names


def run(args: argparse.Namespace) -> int:
    engines = known_engines()
    names = selected(args.engines, engines)
    if args.check:
        return _check(args, engines, names)
    rows = [("ENGINE", "MODE", "SOURCE", "KEY ENV", "KEY"),
            *(row for row in engine_rows(os.environ, engines) if row[0] in names)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [f"{cell:<{width}}" for cell, width in zip(row[:4], widths, strict=True)]
        print("  ".join([*cells, row[4]]))
    return 0


def _check(args: argparse.Namespace, engines: Mapping[str, EngineSpec], names: list[str]) -> int:
    checks = asyncio.run(check_engines(names, engines=engines, env=os.environ, query=args.query,
                                       num_results=args.num_results))
    width = max(len(name) for name in names)
    for check in checks:
        print(check.line(width))
    counts = {status: sum(c.status == status for c in checks)
              for status in ("ok", "failed", "skipped")}
    print(f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} skipped "
          f"(query {args.query!r})")
    return 1 if counts["failed"] else 0
