"""Effective context length: how far a model's recall holds up as the context grows.

A model's advertised window says what fits, not what it can still use. The novel corpora
come in families of sizes (``novel_16k/64k/128k``, ``novel_ts_16k/64k``) that hold the same
targets at the same relative depths, so one model's pass rates across a family's sizes
differ only in context length. The headline follows NoLiMa's rule: the *effective length*
is the longest size whose pass rate stays at or above 85 % of the pass rate at the family's
shortest size run, walking up from that size and stopping at the first size that falls
below (a later size that recovers does not count: the model was already unreliable).

The figure rests on a few dozen targets at most, so it carries a paired bootstrap
interval: targets valid at every size are resampled together (per-target difficulty
cancels out, as in ``needle compare``) and the rule is applied to each resample. When the
resamples do not agree on one size, a note says the sample is too small to separate sizes.

Every surface (the run's terminal summary, ``needle status``, the recall dashboard)
renders :class:`EffectiveLength`; nothing else computes it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from needle_lib.contract.outcome import Outcome
from needle_lib.metrics.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    bootstrap_proportion,
    resample,
)
from needle_lib.recall.novel.flavours import FLAVOURS

#: NoLiMa's rule: a size is still effective while its pass rate is at least this share of
#: the shortest size's.
RETENTION = 0.85
#: Fewer targets valid at every size than this and no interval is drawn: one or two
#: targets cannot show any spread worth a range.
MIN_PAIRED_TARGETS = 3
RULE = (f"NoLiMa's rule: the longest size whose pass rate stays ≥ {100 * RETENTION:.0f} % "
        "of the shortest size's")

#: corpus name → (flavour, context in units of 1,024 tokens)
_FAMILY_OF = {corpus: (flavour.name, k) for flavour in FLAVOURS.values()
              for corpus, k in flavour.sizes.items()}


@dataclass(frozen=True)
class SizeResult:
    """One size of a family for one model: each valid target's verdict (passed or not)."""

    corpus: str
    context_k: int
    verdicts: Mapping[str, bool]  # case_id → passed; errors and skips are left out
    #: The dump was cut short or had errors: its rate rests on fewer targets than planned.
    partial: bool = False

    @property
    def pass_interval(self) -> Interval | None:
        """Pass rate in percent with its 95 % bootstrap interval; None without a target."""
        if not self.verdicts:
            return None
        return bootstrap_proportion(list(self.verdicts.values())).scaled(100)

    @property
    def pass_rate(self) -> float | None:
        if not self.verdicts:
            return None
        return 100 * sum(self.verdicts.values()) / len(self.verdicts)


@dataclass(frozen=True)
class EffectiveLength:
    """One model's effective length on one family under one scoring policy.

    ``effective_k`` is None when there is no baseline to hold (the shortest size has no
    valid target or passes none); ``interval_k`` is the range of sizes (K) the central
    95 % of resamples give (0: resamples with no baseline), None when too few targets are
    shared by every size.
    """

    model: str
    label: str
    family: str  # the flavour: ``python``, ``typescript``
    policy: str
    sizes: tuple[SizeResult, ...]  # ascending by context
    effective_k: int | None
    interval_k: tuple[int, int] | None
    paired_targets: int
    notes: tuple[str, ...]

    @property
    def base(self) -> SizeResult:
        return self.sizes[0]

    @property
    def threshold(self) -> float | None:
        """The pass rate (percent) a size must keep to count."""
        rate = self.base.pass_rate
        return None if rate is None else RETENTION * rate

    @property
    def corpora(self) -> str:
        """``novel_16k/64k/128k``: the family as run."""
        first, *rest = (s.corpus for s in self.sizes)
        return "/".join([first, *(c.rsplit("_", 1)[-1] for c in rest)])

    def headline(self) -> str:
        """``16K`` with its interval, or why there is none."""
        if self.effective_k is None:
            return "none"
        text = f"{self.effective_k}K"
        if self.interval_k is not None:
            low, high = self.interval_k
            span = k_text(low) if low == high else f"{k_text(low)}–{k_text(high)}"
            text += f" [95 % CI {span}]"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model, "label": self.label, "family": self.family,
            "policy": self.policy, "rule": RULE, "effective_k": self.effective_k,
            "interval_k": list(self.interval_k) if self.interval_k else None,
            "threshold": self.threshold, "paired_targets": self.paired_targets,
            "sizes": [{"corpus": s.corpus, "context_k": s.context_k,
                       "pass_rate": s.pass_rate, "targets": len(s.verdicts),
                       "interval": (i.to_json() if (i := s.pass_interval) else None)}
                      for s in self.sizes],
            "notes": list(self.notes),
        }


def _policy(dump: Mapping[str, Any]) -> str:
    scoring = dump["scoring"]
    knobs = (["relax-indent"] if scoring["relax_indent"] else []) + (
        [] if scoring["count_comments"] else ["no-comments"])
    return ", ".join(knobs) or "default"


def size_result(dump: Mapping[str, Any]) -> SizeResult | None:
    """The dump as one size of its family; None when its corpus is not a family's."""
    corpus = dump["corpus"]["name"]
    if corpus not in _FAMILY_OF:
        return None
    verdicts = {c["case_id"]: c["outcome"] == Outcome.PASSED for c in dump["cases"]
                if c["outcome"] in (Outcome.PASSED, Outcome.FAILED)}
    partial = not dump["valid"] or not dump["complete"] or bool(dump["in_progress"])
    return SizeResult(corpus, _FAMILY_OF[corpus][1], verdicts, partial)


def effective_index(rates: Sequence[float | None]) -> int | None:
    """Index of the effective size among ``rates`` (ascending sizes, percent), by the rule;
    None when the shortest size has no rate or passes nothing."""
    base = rates[0]
    if not base:
        return None
    found = 0
    for index, rate in enumerate(rates[1:], start=1):
        if rate is None or rate < RETENTION * base:
            break
        found = index
    return found


def _interval(sizes: Sequence[SizeResult], *, resamples: int,
              seed: int) -> tuple[tuple[int, int] | None, int]:
    """Range of effective sizes over paired resamples of the targets valid at every size,
    and how many targets that is."""
    shared = sorted(set.intersection(*(set(s.verdicts) for s in sizes)))
    if len(shared) < MIN_PAIRED_TARGETS:
        return None, len(shared)
    columns = [[float(s.verdicts[t]) for t in shared] for s in sizes]

    def statistic(indices: Sequence[int]) -> float:
        rates = [100 * sum(column[i] for i in indices) / len(indices) for column in columns]
        found = effective_index(rates)
        return -1.0 if found is None else float(found)

    draws = resample(statistic, len(shared), resamples=resamples, seed=seed)
    alpha = (1 - DEFAULT_CONFIDENCE) / 2
    low = draws[min(len(draws) - 1, math.floor(alpha * len(draws)))]
    high = draws[max(0, math.ceil((1 - alpha) * len(draws)) - 1)]
    return (_size_k(sizes, low), _size_k(sizes, high)), len(shared)


def _size_k(sizes: Sequence[SizeResult], index: float) -> int:
    """The size at ``index`` in K; 0 for a resample with no baseline (no effective size)."""
    return 0 if index < 0 else sizes[int(index)].context_k


def k_text(k: int) -> str:
    return f"{k}K" if k else "none"


def _notes(sizes: Sequence[SizeResult], effective: int | None,
           interval: tuple[int, int] | None, paired: int) -> list[str]:
    notes = []
    base = sizes[0]
    if base.pass_rate is None:
        notes.append(f"no valid target at {base.corpus}: no baseline")
    elif effective is None:
        notes.append(f"{base.corpus} passes nothing: no baseline to hold")
    if interval is None and effective is not None:
        notes.append(f"only {paired} target(s) valid at every size: too few for an interval")
    elif interval is not None and interval[0] != interval[1]:
        notes.append(f"the sample is too small to separate sizes: resamples of the {paired} "
                     f"shared targets put it anywhere from {k_text(interval[0])} to "
                     f"{k_text(interval[1])}")
    partial = [s.corpus for s in sizes if s.partial]
    if partial:
        notes.append(f"rests on incomplete or errored run(s): {', '.join(partial)}")
    return notes


def effective_lengths(dumps: Iterable[Mapping[str, Any]], *,
                      resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> list[EffectiveLength]:
    """Effective length per (model, family, scoring policy) with at least two sizes in
    ``dumps`` (recall dumps; the first dump of a size wins). Sorted by family, model."""
    groups: dict[tuple[str, str, str], dict[int, SizeResult]] = defaultdict(dict)
    labels: dict[str, str] = {}
    for dump in dumps:
        size = size_result(dump)
        if size is None:
            continue
        model = dump["model"]
        labels.setdefault(model["key"], str(model.get("label") or model["key"]))
        family = _FAMILY_OF[size.corpus][0]
        groups[model["key"], family, _policy(dump)].setdefault(size.context_k, size)
    results = []
    for (model_key, family, policy), by_k in sorted(groups.items()):
        if len(by_k) < 2:
            continue
        sizes = tuple(by_k[k] for k in sorted(by_k))
        effective = effective_index([s.pass_rate for s in sizes])
        interval, paired = _interval(sizes, resamples=resamples, seed=seed)
        results.append(EffectiveLength(
            model=model_key, label=labels[model_key], family=family, policy=policy,
            sizes=sizes, effective_k=None if effective is None else sizes[effective].context_k,
            interval_k=interval if effective is not None else None, paired_targets=paired,
            notes=tuple(_notes(sizes, effective, interval, paired))))
    return results


def describe(result: EffectiveLength) -> list[str]:
    """The plain-text lines every surface shows: headline, the rates it rests on, notes."""
    rates = " · ".join(f"{s.corpus} {_rate(s)}" for s in result.sizes)
    policy = "" if result.policy == "default" else f" (scoring: {result.policy})"
    threshold = result.threshold
    keep = f"; threshold {threshold:.1f} %" if threshold else ""
    return [f"{result.label} · {result.corpora}{policy}: effective length "
            f"{result.headline()}",
            f"  pass rate [95 % CI]: {rates}{keep}",
            *(f"  note: {note}" for note in result.notes)]


def _rate(size: SizeResult) -> str:
    interval = size.pass_interval
    if interval is None:
        return "n/a"
    return f"{interval.estimate:.1f} % [{interval.low:.1f}, {interval.high:.1f}]"
