"""The client behind every config-defined engine: ``EngineDefinition`` in, HTTP out.

It reuses the built-in plumbing (retries, errors as data, the uniform snippet cap, latency),
so a config engine is measured exactly like a module engine; only the request and the
response mapping come from the file (see ``engine_config``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import date
from typing import Any

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.search.base import (
    EngineError,
    EngineRequest,
    HttpSearchClient,
    QueryValue,
    each_entry,
    join_texts,
    make_result,
)
from needle_lib.search.engine_config import EngineDefinition, Placement
from needle_lib.search.limits import clip_query
from needle_lib.search.operators import ParsedQuery
from needle_lib.search.types import SearchResult


class ConfigEngineClient(HttpSearchClient):
    default_base_url = ""

    def __init__(self, *, definition: EngineDefinition, base_url: str | None = None,
                 **kwargs: Any) -> None:
        base_url = base_url or definition.base_url
        if not base_url:
            raise ValueError(f"{definition.source}: no base_url in the file and none given")
        super().__init__(base_url=base_url, **kwargs)
        self.definition = definition
        if definition.snippet_field:
            self.snippet_budget_range = definition.snippet_range or (1, 10**9)

    def build_request(self, query: ParsedQuery, num_results: int) -> EngineRequest:
        d = self.definition
        nested = d.method == "POST"
        fields = copy.deepcopy(d.fixed)
        keep: list[str] = []
        if query.sites:
            if d.site.how == "query":
                keep.append(query.site_clause())
            elif d.site.name:
                _put(fields, d.site.name, list(query.sites), nested)
        for operator, placement, day in (("after", d.after, query.after),
                                         ("before", d.before, query.before)):
            if day is not None:
                keep.extend(self._date(fields, operator, placement, day, nested))
        text = clip_query(query.text, max_words=d.max_query_words,
                          max_chars=d.max_query_chars, keep=" ".join(keep))
        _put(fields, d.query_field, text, nested)
        if d.count_field:
            _put(fields, d.count_field, min(num_results, d.max_count or num_results), nested)
        budget = self.snippet_budget()
        if budget is not None and d.snippet_field:
            _put(fields, d.snippet_field, budget, nested)
        headers = dict(d.headers)
        query_key: dict[str, str] = {}
        if d.auth is not None and self._api_key:
            key = f"{d.auth.prefix}{self._api_key}"
            if d.auth.param is not None:
                query_key[d.auth.param] = key
            elif d.auth.header is not None:
                headers[d.auth.header] = key
        if nested:
            return EngineRequest("POST", d.path, params=query_key or None, json=fields,
                                 headers=headers)
        return EngineRequest("GET", d.path, params={**_query_params(fields, d), **query_key},
                             headers=headers)

    def _date(self, fields: JSONObject, operator: str, placement: Placement, day: date,
              nested: bool) -> list[str]:
        """Place one date operator; returns the query-text token when it stays in the text."""
        if placement.how == "query":
            return [f"{operator}:{day.isoformat()}"]
        if placement.name:
            _put(fields, placement.name, day.strftime(self.definition.date_format), nested)
        return []

    def parse_results(self, payload: Any) -> list[SearchResult | None]:
        d = self.definition
        if d.error_field:
            error = _get(payload, d.error_field)
            if error:
                text = error if isinstance(error, str) else json.dumps(error)
                raise EngineError(f"API error: {text}")
        items = _get(payload, d.results) if d.results else payload
        if not isinstance(items, list):
            where = f"at {d.results!r}" if d.results else "as the body"
            raise EngineError(f"response has no results list {where} "
                              f"(check [response] results in {d.source})")
        return each_entry(items, lambda item: make_result(
            _get(item, d.url_field),
            _get(item, d.title_field),
            join_texts(_get(item, d.snippet_field_path)),
            _get(item, d.date_field),
        ))


def _put(fields: JSONObject, name: str, value: JSON, nested: bool) -> None:
    """Set ``name`` in ``fields``: a dotted path for JSON bodies, a literal key for params."""
    if not nested:
        fields[name] = value
        return
    *parents, last = name.split(".")
    target = fields
    for part in parents:
        child = target.setdefault(part, {})
        if not isinstance(child, dict):
            raise EngineError(f"field {name!r} runs into a [request.fixed] value at {part!r}")
        target = child
    target[last] = value


def _query_params(fields: JSONObject, d: EngineDefinition) -> dict[str, QueryValue
                                                                   | list[QueryValue]]:
    """``fields`` as a GET query string: scalars, and lists of them (a repeated key). A
    table has no query-string form (httpx would send its Python repr): refused by name."""
    params: dict[str, QueryValue | list[QueryValue]] = {}
    for name, value in fields.items():
        if isinstance(value, list):
            params[name] = [_query_value(item, name, d) for item in value]
        else:
            params[name] = _query_value(value, name, d)
    return params


def _query_value(value: JSON, name: str, d: EngineDefinition) -> QueryValue:
    if isinstance(value, dict | list):
        raise EngineError(f"{d.source}: field {name!r} is a table or a nested list: a GET "
                          "request's query string cannot carry it (use method = \"POST\")")
    return value


def _get(obj: Any, dotted: str | None) -> Any:
    """The value at a dotted path, or None when any step is missing."""
    if not dotted:
        return None
    for part in dotted.split("."):
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj
