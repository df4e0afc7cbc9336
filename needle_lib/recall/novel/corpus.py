"""Assemble a flavour's sizes: the same 18 targets at the same fractions of every file.

Context-length comparisons stay paired only if a target sits at the same *relative* depth in
every size, so the layout fixes where each target's first body line lands (a fraction of
the file's line count) and fills the gaps with distractors of exactly the right length.
Only distractor volume grows with size; the targets, decoys and helpers are byte-identical.

Sizes are real tokens (``needle_lib.tokens``): ``novel_Nk``'s whole prompt must fit an
N × 1024-token context with room for the answer, so the generator refines each file's line
count until its longest prompt is ~95 % of N × 1024 − 2,048 tokens, and refuses to emit a
file outside 90–100 % of it.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from fractions import Fraction

from needle_lib.recall.novel import names
from needle_lib.recall.novel.flavours import Flavour
from needle_lib.recall.novel.pieces import (
    MAX_CHUNK_LINES,
    Chunk,
    FillerWriter,
    SeedGroup,
    TargetPair,
    seed_group,
)
from needle_lib.recall.novel.prompts import PromptTokens, prompt_tokens
from needle_lib.tokens import ANSWER_ROOM, count_tokens

GENERATOR_VERSION = 2  # bump on any change to generated output
FILL = (Fraction(90, 100), Fraction(1))  # the longest prompt's share of the prompt budget
SIZE_RULE = (
    "the whole prompt of novel_Nk (preamble, corpus and task) is 90-100 % of "
    "N x 1024 - 2048 tokens under the reference tokenizer"
)
_AIM = Fraction(95, 100)  # the generator aims at the middle of FILL …
_CLOSE_ENOUGH = Fraction(1, 100)  # … and stops refining within 1 % of the budget of it
_MAX_REFINEMENTS = 8


def prompt_budget(context_k: int) -> int:
    """Tokens a prompt may take in an N × 1024 context: the rest is the answer's."""
    return context_k * 1024 - ANSWER_ROOM


def _target_fractions(
    slots: list[TargetPair], header_lines: int, smallest_lines: int
) -> tuple[Fraction, ...]:
    """Where each target's first body line sits, as a fraction of its file's line count.

    The fractions come from a reference layout of the smallest size: header, then the target
    pairs with equal gaps. Any larger file scales every gap up, so it can always be filled.
    """
    fixed = header_lines + sum(len(pair.chunk.lines) for pair in slots) + 1  # + footer
    gap = max(1, (smallest_lines - fixed) // (len(slots) + 1))
    total = fixed + gap * (len(slots) + 1)
    fractions = []
    position = header_lines
    for pair in slots:
        position += gap
        fractions.append(Fraction(position + pair.body_offset + 1, total))
        position += len(pair.chunk.lines)
    return tuple(fractions)


def _smallest_lines(flavour: Flavour, groups: list[SeedGroup], slots: list[TargetPair]) -> int:
    """A low estimate of the smallest file's line count, for the reference layout.

    The fixed chunks' own tokens per line, applied to the low end of the rule: the real file
    aims higher, so it has at least these lines and every gap of the layout stays open.
    """
    chunks = [*(pair.chunk for pair in slots), *(h for g in groups for h in g.helpers)]
    lines = [line for chunk in chunks for line in chunk.lines]
    tokens = count_tokens("\n".join(lines) + "\n")
    return int(FILL[0] * prompt_budget(min(flavour.sizes.values())) * len(lines) / tokens)


def validate_seeds(seeds: object) -> tuple[int, int, int]:
    """Three distinct non-negative integers: one independent stream per third of the targets."""
    if (
        not isinstance(seeds, list | tuple)
        or len(seeds) != 3
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        or len(set(seeds)) != 3
    ):
        raise ValueError(f"seeds must be three distinct non-negative integers, got {seeds!r}")
    return (seeds[0], seeds[1], seeds[2])


@dataclass(frozen=True)
class Placement:
    """Where one target landed in one corpus file (1-based line numbers)."""

    name: str
    decoy: str
    seed: int
    def_line: int
    start_line: int  # first body line
    body_lines: int


@dataclass(frozen=True)
class NovelCorpus:
    """One generated corpus file and what the manifest records about it."""

    flavour: Flavour
    name: str
    context_k: int
    text: str
    line_count: int
    function_count: int
    targets: tuple[Placement, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}{self.flavour.syntax.extension}"

    @property
    def context_tokens(self) -> int:
        return self.context_k * 1024

    @property
    def prompt_budget(self) -> int:
        return prompt_budget(self.context_k)

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def relative_position(self, target: Placement) -> float:
        return round(target.start_line / self.line_count, 6)

    def fits(self, tokens: PromptTokens) -> bool:
        """Whether the longest prompt obeys the size rule."""
        return FILL[0] * self.prompt_budget <= tokens.max <= FILL[1] * self.prompt_budget


def build_corpora(
    flavour: Flavour, seeds: tuple[int, int, int] | None = None
) -> tuple[NovelCorpus, ...]:
    """Every size of a flavour, from the three seeds alone (plus the size itself for the
    distractors); the flavour's default seeds unless given."""
    seeds = validate_seeds(flavour.default_seeds if seeds is None else seeds)
    groups = [seed_group(flavour.syntax, seed) for seed in seeds]
    _refuse_shared_names(groups)
    # Interleave the seeds so each third of the targets spans the whole file.
    slots = [groups[i % 3].pairs[i // 3] for i in range(3 * len(groups[0].pairs))]
    smallest = _smallest_lines(flavour, groups, slots)
    corpora: list[NovelCorpus] = []
    lines_per_token = Fraction(smallest, FILL[0] * prompt_budget(min(flavour.sizes.values())))
    for name, context_k in flavour.sizes.items():
        plan = _Plan(flavour, name, context_k, seeds, groups, slots, smallest)
        corpus, tokens = _build_size(plan, lines_per_token)
        corpora.append(corpus)
        lines_per_token = Fraction(corpus.line_count, tokens.max)
    return tuple(corpora)


def _refuse_shared_names(groups: list[SeedGroup]) -> None:
    owner: dict[str, int] = {}
    for group in groups:
        for name in group.names():
            if name in owner:
                raise ValueError(
                    f"seeds {owner[name]} and {group.seed} both generate the function "
                    f"{name!r}; choose other seeds"
                )
            owner[name] = group.seed


@dataclass(frozen=True)
class _Plan:
    """What one size is assembled from; only its line count is refined."""

    flavour: Flavour
    name: str
    context_k: int
    seeds: tuple[int, int, int]
    groups: list[SeedGroup]
    slots: list[TargetPair]
    smallest: int


def _build_size(plan: _Plan, lines_per_token: Fraction) -> tuple[NovelCorpus, PromptTokens]:
    """Refine the total line count until the longest prompt is close to the aim."""
    budget = prompt_budget(plan.context_k)
    aim = budget * _AIM
    line_count = int(aim * lines_per_token)
    best: tuple[NovelCorpus, PromptTokens] | None = None
    for _ in range(_MAX_REFINEMENTS):
        corpus = _assemble(plan, line_count)
        tokens = prompt_tokens(corpus)
        if best is None or abs(tokens.max - aim) < abs(best[1].max - aim):
            best = corpus, tokens
        if abs(tokens.max - aim) <= budget * _CLOSE_ENOUGH:
            break
        line_count = int(line_count * aim / tokens.max)
    assert best is not None
    if not best[0].fits(best[1]):
        raise ValueError(
            f"{plan.name}: the longest prompt is {best[1].max} tokens, outside 90-100 % of "
            f"the {budget}-token budget ({SIZE_RULE})"
        )
    return best


def _size_seed(seeds: tuple[int, int, int], context_k: int) -> int:
    return seeds[0] * 1_000_003 + seeds[1] * 10_007 + seeds[2] * 101 + context_k


def _assemble(plan: _Plan, line_count: int) -> NovelCorpus:
    name, syntax = plan.name, plan.flavour.syntax
    registry = names.NameRegistry()
    for group in plan.groups:
        for defined in group.names():
            registry.reserve(defined)
    rng = random.Random(_size_seed(plan.seeds, plan.context_k))
    helpers = tuple(h for group in plan.groups for h in group.helper_names)
    layout = _Layout(FillerWriter(syntax, rng, registry, helpers), rng)
    layout.pending = [chunk for group in plan.groups for chunk in group.helpers]
    title = f"Generated corpus {name}: opaque names and arbitrary constants, not meant to run."
    seed_text = ", ".join(str(s) for s in plan.seeds)
    detail = f"needle novel generator v{GENERATOR_VERSION}, seeds {seed_text}."
    layout.add(Chunk(syntax.file_header(title, detail), 0))
    footer = syntax.comment(f"end of {name}")
    placements = []
    fractions = _target_fractions(plan.slots, len(layout.lines), plan.smallest)
    for pair, fraction in zip(plan.slots, fractions, strict=True):
        start = round(fraction * line_count)
        gap = start - (len(layout.lines) + pair.body_offset + 1)
        if gap < 0:
            raise ValueError(
                f"{name}: target {pair.name} cannot start at line {start} "
                f"({float(fraction):.4f} of {line_count}); the corpus is too small"
            )
        layout.fill(gap)
        placements.append(
            Placement(pair.name, pair.decoy, pair.seed, start - 1, start, pair.body_lines)
        )
        layout.add(pair.chunk)
    tail = line_count - len(layout.lines) - 1
    if tail < 0:
        raise ValueError(f"{name}: the last target overruns {line_count} lines by {-tail}")
    layout.fill(tail)
    if layout.pending:
        raise ValueError(f"{name}: no room left for {len(layout.pending)} helper function(s)")
    layout.lines.append(footer)
    return NovelCorpus(
        flavour=plan.flavour,
        name=name,
        context_k=plan.context_k,
        text="\n".join(layout.lines) + "\n",
        line_count=len(layout.lines),
        function_count=layout.functions,
        targets=tuple(placements),
    )


class _Layout:
    """The growing file: whole chunks appended, gaps filled to an exact line count."""

    def __init__(self, filler: FillerWriter, rng: random.Random) -> None:
        self.filler = filler
        self.rng = rng
        self.lines: list[str] = []
        self.functions = 0
        self.pending: list[Chunk] = []  # helpers still to place, in order

    def add(self, chunk: Chunk) -> None:
        self.lines.extend(chunk.lines)
        self.functions += chunk.functions

    def fill(self, n_lines: int) -> None:
        """Append exactly ``n_lines`` lines: pending helpers first, then distractors."""
        while self.pending and len(self.pending[0].lines) <= n_lines:
            chunk = self.pending.pop(0)
            self.add(chunk)
            n_lines -= len(chunk.lines)
        while n_lines > 0:
            # Never leave a remainder of 1 or 2 lines: no chunk but blank lines fits there.
            longest = min(MAX_CHUNK_LINES, n_lines - 3)
            size = n_lines if n_lines <= 12 else self.rng.randint(4, longest)
            self.add(self.filler.chunk(size))
            n_lines -= size
