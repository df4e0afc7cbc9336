"""Engines defined by a file, ``configs/engines/<name>.toml``, instead of a module.

Why: a user evaluating their own search stack (Elasticsearch or OpenSearch behind an API,
Vespa, a RAG retriever) or a self-hosted SearXNG should be able to add it without writing
code. A file says how to call the API (method, URL, auth), where the query, result count,
snippet budget and operators go, and where the results and their fields are in the JSON.

Validation is strict, like every Needle config: an unknown key, a missing required key or a
wrong type is an error naming the file and the key, so a typo never silently becomes a
default that sends something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, time
from pathlib import Path
from typing import Any

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.net.body import MAX_TIMEOUT_S
from needle_lib.redact import register_secret_param
from needle_lib.search.prices import Price, price_of
from needle_lib.tomlconf import ConfigError, Key, TOMLTable, TOMLValue, check_section, load_toml

NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
METHODS = ("GET", "POST")
#: Where an operator goes: kept in the query text (Google syntax), dropped, or a field.
PLACEMENTS = ("query", "drop", "field")
OPERATORS = ("site", "after", "before")

TOP_SCHEMA = {
    "description": Key((str,)),
    "method": Key((str,), True),
    "base_url": Key((str,)),
    "path": Key((str,), True),
    "timeout": Key((float,)),
    "auth": Key((dict,)),
    "request": Key((dict,), True),
    "response": Key((dict,), True),
    "price_per_1k": Key((float,)),
    "price_source": Key((str,)),
    "price_date": Key((str, date)),
}
AUTH_SCHEMA = {
    "header": Key((str,)),
    "param": Key((str,)),
    "key_env": Key((str,), True),
    "prefix": Key((str,)),
    "optional": Key((bool,)),
}
REQUEST_SCHEMA = {
    "query": Key((str,), True),
    "count": Key((str,)),
    "max_count": Key((int,)),
    "max_query_words": Key((int,)),
    "max_query_chars": Key((int,)),
    "snippet_chars": Key((str,)),
    "snippet_chars_range": Key((list,)),
    "date_format": Key((str,)),
    **{name: Key((str,)) for name in OPERATORS},
    **{f"{name}_field": Key((str,)) for name in OPERATORS},
    "fixed": Key((dict,)),
    "headers": Key((dict,)),
}
RESPONSE_SCHEMA = {
    "results": Key((str,), True),
    "url": Key((str,), True),
    "title": Key((str,)),
    "snippet": Key((str,)),
    "date": Key((str,)),
    "error": Key((str,)),
}


@dataclass(frozen=True)
class Auth:
    """The key goes in ``header`` as ``prefix + key``, or in the query-string parameter
    ``param`` (APIs that take ``?api_key=``); ``optional`` keys allow keyless calls. A
    ``param`` is marked secret, so its value is masked in every URL Needle logs or keeps."""

    header: str | None
    key_env: str
    prefix: str = ""
    optional: bool = False
    param: str | None = None


@dataclass(frozen=True)
class Placement:
    """Where one operator goes: ``query``, ``drop``, or ``field`` (then ``name`` is set)."""

    how: str = "drop"
    name: str | None = None


@dataclass(frozen=True)
class EngineDefinition:
    """One config-defined engine. Field names are dotted paths into a JSON body for POST
    (``advanced_settings.max_results``) and literal parameter names for GET."""

    name: str
    source: Path
    method: str
    path: str
    query_field: str
    results: str
    url_field: str
    base_url: str | None = None
    description: str = ""
    timeout: float = 30.0
    auth: Auth | None = None
    count_field: str | None = None
    max_count: int | None = None
    max_query_words: int | None = None
    max_query_chars: int | None = None
    snippet_field: str | None = None
    snippet_range: tuple[int, int] | None = None
    date_format: str = "%Y-%m-%d"
    site: Placement = field(default_factory=Placement)
    after: Placement = field(default_factory=Placement)
    before: Placement = field(default_factory=Placement)
    #: sent as they are, in the body or the query string: the engine API's own fields
    fixed: JSONObject = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    title_field: str | None = None
    snippet_field_path: str | None = None
    date_field: str | None = None
    error_field: str | None = None
    #: USD per 1,000 queries (``price_per_1k`` with ``price_source`` and ``price_date``).
    price: Price | None = None


def load_engine_definition(path: Path) -> EngineDefinition:
    """Load and validate one ``configs/engines/<name>.toml``; errors name the file and key."""
    name = path.stem
    if not NAME.match(name):
        raise ConfigError(f"{path}: engine name {name!r} (the file name) must be lowercase "
                          "letters, digits and dashes")
    data = check_section(load_toml(path), TOP_SCHEMA, path=path)
    request = check_section(data["request"], REQUEST_SCHEMA, path=path, section="request")
    response = check_section(data["response"], RESPONSE_SCHEMA, path=path, section="response")
    auth = _auth(data.get("auth"), path)
    method = data["method"].upper()
    if method not in METHODS:
        raise ConfigError(f"{path}: key 'method' must be GET or POST, got {data['method']!r}")
    if not data["path"].startswith("/"):
        raise ConfigError(f"{path}: key 'path' must start with '/', got {data['path']!r}")
    base_url = data.get("base_url")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"{path}: key 'base_url' must start with http:// or https://")
    timeout = float(data.get("timeout", 30.0))
    if not 0 < timeout <= MAX_TIMEOUT_S:
        raise ConfigError(f"{path}: key 'timeout' must be > 0 and at most {MAX_TIMEOUT_S:g} "
                          f"seconds, got {timeout:g}")
    for key in ("max_count", "max_query_words", "max_query_chars"):
        if key in request and request[key] < 1:
            raise ConfigError(f"{path}: [request] key {key!r} must be at least 1")
    return EngineDefinition(
        name=name,
        source=path,
        method=method,
        path=data["path"],
        base_url=base_url.rstrip("/") if base_url else None,
        description=data.get("description", ""),
        timeout=timeout,
        auth=auth,
        query_field=request["query"],
        count_field=request.get("count"),
        max_count=request.get("max_count"),
        max_query_words=request.get("max_query_words"),
        max_query_chars=request.get("max_query_chars"),
        snippet_field=request.get("snippet_chars"),
        snippet_range=_range(request.get("snippet_chars_range"), path),
        date_format=request.get("date_format", "%Y-%m-%d"),
        site=_placement(request, "site", path),
        after=_placement(request, "after", path),
        before=_placement(request, "before", path),
        fixed=_fixed(request.get("fixed", {}), path),
        headers=_headers(request.get("headers", {}), path),
        results=response["results"],
        url_field=response["url"],
        title_field=response.get("title"),
        snippet_field_path=response.get("snippet"),
        date_field=response.get("date"),
        error_field=response.get("error"),
        price=price_of(data, path),
    )


def _auth(data: Any, path: Path) -> Auth | None:
    if data is None:
        return None
    auth = check_section(data, AUTH_SCHEMA, path=path, section="auth")
    header, param = auth.get("header"), auth.get("param")
    if (header is None) == (param is None):
        raise ConfigError(f"{path}: [auth] needs exactly one of 'header' (the key in a "
                          "request header) or 'param' (the key in the query string)")
    if param is not None:
        register_secret_param(param)
    return Auth(header, auth["key_env"], auth.get("prefix", ""), auth.get("optional", False),
                param)


def _placement(request: TOMLTable, operator: str, path: Path) -> Placement:
    how = request.get(operator, "drop")
    name = request.get(f"{operator}_field")
    if not isinstance(how, str) or how not in PLACEMENTS:
        raise ConfigError(f"{path}: [request] key {operator!r} must be one of "
                          f"{', '.join(PLACEMENTS)}, got {how!r}")
    if name is not None and not isinstance(name, str):  # REQUEST_SCHEMA checked it
        raise ConfigError(f"{path}: [request] key '{operator}_field' must be str")
    if (how == "field") != (name is not None):
        raise ConfigError(f"{path}: [request] key '{operator}_field' is required when "
                          f"{operator} = \"field\" and not allowed otherwise")
    return Placement(how, name)


def _range(value: list[Any] | None, path: Path) -> tuple[int, int] | None:
    if value is None:
        return None
    ok = (len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
          and 1 <= value[0] <= value[1])
    if not ok:
        raise ConfigError(f"{path}: [request] key 'snippet_chars_range' must be [min, max] "
                          f"with 1 <= min <= max, got {value!r}")
    return value[0], value[1]


def _fixed(values: TOMLTable, path: Path) -> JSONObject:
    """Constant fields, as the JSON they are sent as; TOML dates have no JSON form, so
    they are refused by name (in a list too)."""
    return {key: _fixed_value(value, key, path) for key, value in values.items()}


def _fixed_value(value: TOMLValue, key: str, path: Path) -> JSON:
    if isinstance(value, date | time):  # a datetime is a date
        raise ConfigError(f"{path}: [request.fixed] key {key!r}: write the date as a string")
    if isinstance(value, dict):
        return _fixed(value, path)
    if isinstance(value, list):
        return [_fixed_value(item, key, path) for item in value]
    return value


def _headers(values: TOMLTable, path: Path) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in values.items():
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [request.headers] key {key!r} must be str, got "
                              f"{type(value).__name__} {value!r}")
        headers[key] = value
    return headers
