"""Web search engine clients with one errors-as-data interface (see ``registry``)."""

from needle_lib.search.base import EngineRequest, HttpSearchClient, RetryPolicy
from needle_lib.search.operators import ParsedQuery, parse_query
from needle_lib.search.registry import ENGINES, EngineSpec, known_engines, make_engine
from needle_lib.search.types import (
    MissingAPIKey,
    SearchOutcome,
    SearchResult,
    UnknownEngine,
)

__all__ = [
    "ENGINES",
    "EngineRequest",
    "EngineSpec",
    "HttpSearchClient",
    "MissingAPIKey",
    "ParsedQuery",
    "RetryPolicy",
    "SearchOutcome",
    "SearchResult",
    "UnknownEngine",
    "known_engines",
    "make_engine",
    "parse_query",
]
