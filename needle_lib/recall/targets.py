"""Which definitions can be asked about: eligibility, answerability, sampling.

A target must have at least ``primary_lines`` body lines, and the prompt must be able to
single it out. When another definition in the same file has the same name AND the same
signature text, no prompt can tell the two apart: asking would charge the benchmark's own
ambiguity to the model, so such targets are excluded and the exclusion is printed. Twins in
different files are told apart by the file path a multi-file prompt names.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from needle_lib.errors import UsageError
from needle_lib.recall.corpus import SamplePolicy
from needle_lib.recall.extract import CODE, FunctionDef, ParsedCorpus

BONUS_LINES = 40


@dataclass(frozen=True)
class Target:
    function: FunctionDef
    primary_lines: int
    case_id: str  # unique within the corpus: the name, or name-L<line> when the name repeats

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def start_line(self) -> int:
        return self.function.body_start

    def window(self, corpus_lines: list[str]) -> list[str]:
        start = self.start_line - 1
        return corpus_lines[start : start + self.primary_lines]

    def bonus_window(self, corpus_lines: list[str]) -> list[str]:
        start = self.start_line - 1 + self.primary_lines
        return corpus_lines[start : start + BONUS_LINES]

    def window_kinds(self, kinds: tuple[str, ...]) -> list[str]:
        start = self.start_line - 1
        return list(kinds[start : start + self.primary_lines])


def composition(kinds: list[str]) -> dict[str, int]:
    counts = Counter(kinds)
    return {kind: counts.get(kind, 0) for kind in ("code", "blank", "comment", "docstring")}


@dataclass(frozen=True)
class TargetSet:
    eligible: list[Target]
    excluded: list[FunctionDef]
    #: Definitions found, and how many of them were passed over for a body shorter than the
    #: window or too few code lines in it: what a user needs to know when nothing is left.
    found: int = 0
    too_short: int = 0
    too_little_code: int = 0
    longest: int = 0  # the longest body found, in lines
    primary_lines: int = 0

    def shortfall(self) -> str:
        """Why definitions were passed over, e.g. ``"14 function(s) found, 9 with a body
        shorter than primary_lines = 20 (the longest has 12)"``."""
        parts = [f"{self.found} function(s) found"]
        if self.too_short:
            parts.append(f"{self.too_short} with a body shorter than primary_lines = "
                         f"{self.primary_lines} lines (the longest has {self.longest})")
        if self.too_little_code:
            parts.append(f"{self.too_little_code} with too few code lines (--min-code-lines)")
        return ", ".join(parts)

    def nothing_to_ask(self) -> str | None:
        """Why no target is eligible, with the flag that would change it; None when some is."""
        if self.eligible:
            return None
        if not self.found:
            return "no function or method definition found in the corpus"
        advice = ""
        if self.too_short and 0 < self.longest < self.primary_lines:
            advice = (f"; ask about a shorter window with --primary-lines N "
                      f"(N ≤ {self.longest}), or point at code with longer functions")
        return f"no function is eligible to ask about: {self.shortfall()}{advice}"

    def exclusion_message(self) -> str | None:
        if not self.excluded:
            return None
        # Twins share a name, so each name carries its count: the list adds up to the total.
        counts = Counter(f.name for f in self.excluded)
        names = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in sorted(counts.items()))
        return (
            f"excluded {len(self.excluded)} unanswerable target(s) — "
            f"duplicate name AND identical signature: {names}"
        )


def find_targets(parsed: ParsedCorpus, primary_lines: int, min_code_lines: int = 0) -> TargetSet:
    """Every eligible, answerable target, in corpus order."""
    anchors = Counter((f.file, f.anchor) for f in parsed.functions)
    first_file: dict[str, str] = {}
    for function in parsed.functions:
        first_file.setdefault(function.name, function.file)
    eligible: list[FunctionDef] = []
    excluded: list[FunctionDef] = []
    too_short = too_little_code = 0
    for function in parsed.functions:
        if function.body_length < primary_lines:
            too_short += 1
            continue
        if first_file[function.name] != function.file:
            continue  # cross-file name collision: the first file keeps the name
        if anchors[function.file, function.anchor] > 1:
            excluded.append(function)
            continue
        window = parsed.kinds[function.body_start - 1 : function.body_start - 1 + primary_lines]
        if sum(kind == CODE for kind in window) < min_code_lines:
            too_little_code += 1
            continue
        eligible.append(function)
    repeats = Counter(f.name for f in eligible)
    targets = [
        Target(f, primary_lines, f.name if repeats[f.name] == 1 else f"{f.name}-L{f.body_start}")
        for f in eligible
    ]
    longest = max((f.body_length for f in parsed.functions), default=0)
    return TargetSet(targets, excluded, len(parsed.functions), too_short, too_little_code,
                     longest, primary_lines)


def sample_targets(targets: list[Target], k: int, seed: int) -> list[Target]:
    """Deterministic for (k, seed), stratified by position.

    The eligible targets (in corpus order) are cut into k contiguous strata of near-equal
    size and one target is drawn from each, so a sample always spans the beginning, middle
    and end of the corpus: depth in the context is what the benchmark measures.
    """
    if k >= len(targets):
        return list(targets)
    rng = random.Random(seed)
    picked: list[Target] = []
    for stratum in range(k):
        lo = stratum * len(targets) // k
        hi = (stratum + 1) * len(targets) // k
        picked.append(targets[rng.randrange(lo, hi)])
    return picked


class UnknownFunction(UsageError, LookupError):
    """A ``--function`` name that is not an eligible target; the message lists near names."""


def select_targets(
    parsed: ParsedCorpus, policy: SamplePolicy, functions: list[str] | None = None
) -> tuple[list[Target], TargetSet]:
    """The targets a run asks about: named ones (``--function``) or a stratified sample."""
    target_set = find_targets(parsed, policy.primary_lines, policy.min_code_lines)
    if not functions:
        return sample_targets(target_set.eligible, policy.k, policy.seed), target_set
    chosen: list[Target] = []
    for wanted in functions:
        matches = [t for t in target_set.eligible if wanted in (t.name, t.case_id)]
        if not matches:
            raise UnknownFunction(_unknown_function_message(wanted, parsed, target_set, policy))
        chosen.extend(t for t in matches if t not in chosen)
    return chosen, target_set


def _unknown_function_message(
    wanted: str, parsed: ParsedCorpus, target_set: TargetSet, policy: SamplePolicy
) -> str:
    defined = [f for f in parsed.functions if f.name == wanted]
    if any(f in target_set.excluded for f in defined):
        return f"--function {wanted}: excluded as unanswerable (duplicate name and signature)"
    if defined:
        # Only the first file's definitions can be asked about (cross-file collision rule).
        askable = [f for f in defined if f.file == defined[0].file]
        longest = max(f.body_length for f in askable)
        where = f" in {defined[0].file}" if len(askable) < len(defined) else ""
        return (
            f"--function {wanted}: its body{where} has {longest} line(s), fewer than "
            f"primary_lines = {policy.primary_lines} (or too few code lines)"
        )
    return f"--function {wanted}: no function of that name in the corpus"
