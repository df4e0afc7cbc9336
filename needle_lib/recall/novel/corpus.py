"""Assemble the three corpus sizes: the same 18 targets at the same fractions of every file.

Context-length comparisons stay paired only if a target sits at the same *relative* depth in
every size, so the layout fixes where each target's first body line lands (a fraction of
the file's line count) and fills the gaps with distractors of exactly the right length.
Only distractor volume grows with size; the targets, decoys and helpers are byte-identical.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from fractions import Fraction

from needle_lib.recall.novel import names
from needle_lib.recall.novel.pieces import (
    Chunk,
    FillerWriter,
    SeedGroup,
    TargetPair,
    seed_group,
)

GENERATOR_VERSION = 1  # bump on any change to generated output
DEFAULT_SEEDS: tuple[int, int, int] = (48_611, 73_019, 90_247)
SIZES: dict[str, int] = {"novel_16k": 16_000, "novel_64k": 64_000, "novel_128k": 128_000}
CHARS_PER_TOKEN = 4  # the token estimate every size is budgeted and reported in
SIZE_TOLERANCE = Fraction(1, 10)  # a size may miss its nominal token count by at most 10 %
_AIM = Fraction(2, 100)  # stop refining the line budget once this close
_MAX_REFINEMENTS = 8
# The smallest size must fit its targets with even gaps between them; lines are budgeted
# at this (pessimistic) width, so real files, with shorter lines, always have room.
_REFERENCE_CHARS_PER_LINE = 40


def _target_fractions(slots: list[TargetPair], header_lines: int) -> tuple[Fraction, ...]:
    """Where each target's first body line sits, as a fraction of its file's line count.

    The fractions come from a reference layout of the smallest size: header, then the target
    pairs with equal gaps. Any larger file scales every gap up, so it can always be filled.
    """
    smallest = min(SIZES.values()) * CHARS_PER_TOKEN // _REFERENCE_CHARS_PER_LINE
    fixed = header_lines + sum(len(pair.chunk.lines) for pair in slots) + 1  # + footer
    gap = max(1, (smallest - fixed) // (len(slots) + 1))
    total = fixed + gap * (len(slots) + 1)
    fractions = []
    position = header_lines
    for pair in slots:
        position += gap
        fractions.append(Fraction(position + pair.body_offset + 1, total))
        position += len(pair.chunk.lines)
    return tuple(fractions)


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

    name: str
    nominal_tokens: int
    text: str
    line_count: int
    function_count: int
    targets: tuple[Placement, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}.py"

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def est_tokens(self) -> int:
        return round(Fraction(self.chars, CHARS_PER_TOKEN))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def relative_position(self, target: Placement) -> float:
        return round(target.start_line / self.line_count, 6)


def build_corpora(seeds: tuple[int, int, int] = DEFAULT_SEEDS) -> tuple[NovelCorpus, ...]:
    """Every size, from the three seeds alone (plus the size itself for the distractors)."""
    seeds = validate_seeds(seeds)
    groups = [seed_group(seed) for seed in seeds]
    _refuse_shared_names(groups)
    # Interleave the seeds so each third of the targets spans the whole file.
    slots = [groups[i % 3].pairs[i // 3] for i in range(3 * len(groups[0].pairs))]
    corpora: list[NovelCorpus] = []
    chars_per_line = Fraction(36)  # first guess; each size then starts from the last one's
    for name, tokens in SIZES.items():
        corpora.append(_build_size(name, tokens, seeds, groups, slots, chars_per_line))
        chars_per_line = Fraction(corpora[-1].chars, corpora[-1].line_count)
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


def _build_size(
    name: str,
    tokens: int,
    seeds: tuple[int, int, int],
    groups: list[SeedGroup],
    slots: list[TargetPair],
    chars_per_line: Fraction,
) -> NovelCorpus:
    """Refine the total line count until the character budget is met."""
    budget = tokens * CHARS_PER_TOKEN
    line_count = int(budget / chars_per_line)
    best: NovelCorpus | None = None
    for _ in range(_MAX_REFINEMENTS):
        corpus = _assemble(name, tokens, seeds, groups, slots, line_count)
        if best is None or abs(corpus.chars - budget) < abs(best.chars - budget):
            best = corpus
        if abs(corpus.chars - budget) <= budget * _AIM:
            break
        line_count = line_count * budget // corpus.chars
    assert best is not None
    if abs(best.chars - budget) > budget * SIZE_TOLERANCE:
        raise ValueError(f"{name}: {best.chars} chars is not within 10 % of {budget}")
    return best


def _size_seed(seeds: tuple[int, int, int], tokens: int) -> int:
    return seeds[0] * 1_000_003 + seeds[1] * 10_007 + seeds[2] * 101 + tokens


def _assemble(
    name: str,
    tokens: int,
    seeds: tuple[int, int, int],
    groups: list[SeedGroup],
    slots: list[TargetPair],
    line_count: int,
) -> NovelCorpus:
    registry = names.NameRegistry()
    for group in groups:
        for defined in group.names():
            registry.reserve(defined)
    rng = random.Random(_size_seed(seeds, tokens))
    helpers = tuple(h for group in groups for h in group.helper_names)
    layout = _Layout(FillerWriter(rng, registry, helpers), rng)
    layout.pending = [chunk for group in groups for chunk in group.helpers]
    layout.add(_header(name, seeds))
    footer = f"# end of {name}"
    placements = []
    fractions = _target_fractions(slots, len(layout.lines))
    for pair, fraction in zip(slots, fractions, strict=True):
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
        name=name,
        nominal_tokens=tokens,
        text="\n".join(layout.lines) + "\n",
        line_count=len(layout.lines),
        function_count=layout.functions,
        targets=tuple(placements),
    )


def _header(name: str, seeds: tuple[int, int, int]) -> Chunk:
    seed_text = ", ".join(str(s) for s in seeds)
    return Chunk(
        (
            f'"""Generated corpus {name}: opaque names and arbitrary constants, not meant to run.',
            "",
            f"needle novel generator v{GENERATOR_VERSION}, seeds {seed_text}.",
            '"""',
            "",
            "",
        ),
        0,
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
            size = n_lines if n_lines <= 12 else self.rng.randint(4, min(45, n_lines - 3))
            self.add(self.filler.chunk(size))
            n_lines -= size
