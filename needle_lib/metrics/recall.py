"""recall@K and MRR@K for known-item benchmarks (one gold item per query).

A hit is decided by a predicate over a ranked result, so each bench keeps its own notion of
identity (arXiv id, DOI, citation, accession number) while the arithmetic lives here once.
With a single gold item, recall@K is 1 if it appears in the top K, else 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def first_hit_rank(results: Sequence[T], is_hit: Callable[[T], bool], k: int) -> int | None:
    """1-based rank of the first hit within the top ``k``, or None."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    for rank, result in enumerate(results[:k], start=1):
        if is_hit(result):
            return rank
    return None


def recall_at_k(results: Sequence[T], is_hit: Callable[[T], bool], k: int) -> float:
    return 0.0 if first_hit_rank(results, is_hit, k) is None else 1.0


def mrr_at_k(results: Sequence[T], is_hit: Callable[[T], bool], k: int) -> float:
    """Reciprocal rank of the first hit in the top ``k`` (0 when there is none)."""
    rank = first_hit_rank(results, is_hit, k)
    return 0.0 if rank is None else 1.0 / rank


def gold_id_matcher(
    gold_ids: Iterable[str], ids_of: Callable[[T], Iterable[str]]
) -> Callable[[T], bool]:
    """A predicate: does any id extracted from a result equal a gold id (case-insensitive)?"""
    gold = {g.strip().lower() for g in gold_ids if g.strip()}
    if not gold:
        raise ValueError("gold_id_matcher needs at least one non-empty gold id")
    return lambda result: any(i.strip().lower() in gold for i in ids_of(result))
