"""Seeded, stratified sampling of generated rows, reproducible across machines and tools.

The shuffle is Fisher–Yates driven by splitmix64, NEEDLE's own choice, and each stratum's
seed is the run seed XOR the first 8 bytes (big-endian, 64 bits) of the SHA-256 of the
stratum key, as NEEDLE derives it, so the same seed picks the same rows here and there (a
user comparing with NEEDLE's published runs needs the same sample); Python's ``random``
would tie a cohort to CPython's generator. Without an explicit seed, generators use
``rows.seed_from_hour``: two runs in the same hour agree, the next hour draws afresh.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """One splitmix64 step: ``(next state, 64-bit output)``."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def shuffled(items: Sequence[T], seed: int) -> list[T]:
    """A copy of ``items`` in a seeded Fisher–Yates order (splitmix64 draws)."""
    out = list(items)
    state = seed & _MASK
    for i in range(len(out) - 1, 0, -1):
        state, draw = splitmix64(state)
        j = draw % (i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def stratum_seed(seed: int, key: str) -> int:
    """The seed of one stratum's shuffle: ``seed`` XOR the 64-bit head of SHA-256(key)."""
    return seed ^ int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def stratified_sample(items: Sequence[T], key: Callable[[T], str], k: int, seed: int) -> list[T]:
    """``k`` items drawn round-robin over the strata of ``key`` (all when ``k <= 0`` or
    there are no more than ``k``): every stratum contributes before any contributes twice,
    so a small sample still covers each kind of query."""
    if k <= 0 or len(items) <= k:
        return list(items)
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    queues = {name: shuffled(members, stratum_seed(seed, name))
              for name, members in groups.items()}
    order = shuffled(sorted(queues), seed)
    picked: list[T] = []
    depth = 0
    while len(picked) < k:
        for name in order:
            if depth < len(queues[name]):
                picked.append(queues[name][depth])
                if len(picked) == k:
                    break
        depth += 1
    return picked
