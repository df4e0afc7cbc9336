"""The chunks a novel corpus is assembled from: seeded target/decoy pairs, helpers, fillers.

A chunk is a run of whole lines ending in the two blank lines that separate top-level
definitions, so the layout can place chunks by line count alone.

Only the 18 targets have bodies of ``PRIMARY_LINES`` or more; decoys, helpers, distractor
functions, classes and methods all stay below, so nothing else is ever eligible.

Why 24 lines and not the 48 of generator v1: the sizes are real token counts now, and the
smallest corpus must hold all 18 targets, their decoys and a haystack in 14,336 tokens.
Opaque code costs ~13.5 tokens a line even in this lean grammar (every digit is a token),
so 18 × 48-line targets alone would take ~12,000 tokens: a 16k "haystack" of nothing but
needles. With 24-line windows the targets, decoys and helpers take ~75 % of novel_16k and
~8 % of novel_128k.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from needle_lib.recall.novel import names
from needle_lib.recall.novel.code import (
    BodyWriter,
    constant,
    int_literal,
    phrase,
    text_literal,
    weighted,
)
from needle_lib.recall.novel.syntax import Syntax

PRIMARY_LINES = 24  # the recall window of the novel_* corpus configs
TARGETS_PER_SEED = 6
HELPERS_PER_SEED = 3
TARGET_BODY_LINES = (PRIMARY_LINES + 2, PRIMARY_LINES + 5)  # bonus lines after the window
DECOY_BODY_LINES = (6, 8)  # enough to open like the target: every shape fits its budget
HELPER_BODY_LINES = (2, 5)
MAX_FILLER_BODY = PRIMARY_LINES - 4  # distractor bodies stay under the window
MAX_CLASS_LINES = PRIMARY_LINES - 4  # a class's body (its lines after the header) too
MAX_METHOD_COST = 12  # blank + def + body (+ closing brace)
MAX_CHUNK_LINES = MAX_FILLER_BODY + 3  # the longest distractor chunk: def + body + separator
SEPARATOR = ("", "")


@dataclass(frozen=True)
class Chunk:
    """Whole lines (separator included) and how many function definitions they hold."""

    lines: tuple[str, ...]
    functions: int


@dataclass(frozen=True)
class TargetPair:
    """A target and its decoy, adjacent in one chunk; identical in every corpus size."""

    seed: int
    name: str
    decoy: str
    body_lines: int
    chunk: Chunk
    body_offset: int  # index in chunk.lines of the target's first body line


@dataclass(frozen=True)
class SeedGroup:
    """Everything one seed contributes: its helpers and its six target pairs."""

    seed: int
    helper_names: tuple[str, ...]
    helpers: tuple[Chunk, ...]
    pairs: tuple[TargetPair, ...]

    def names(self) -> list[str]:
        """Every function name the group defines, in generation order."""
        return [*self.helper_names, *(n for p in self.pairs for n in (p.name, p.decoy))]


def _params(rng: random.Random, count: int) -> list[str]:
    params: list[str] = []
    while len(params) < count:
        candidate = names.local_name(rng)
        if candidate not in params:
            params.append(candidate)
    return params


def _closing(syntax: Syntax, level: int = 0) -> tuple[str, ...]:
    """The line(s) after a definition's body: a closing brace, or none under indentation."""
    return (syntax.indent * level + syntax.close(),) if syntax.closers else ()


def _function(
    syntax: Syntax, rng: random.Random, name: str, helpers: tuple[str, ...], body_lines: int
) -> list[str]:
    params = _params(rng, rng.randint(1, 3))
    defaults = {params[-1]: str(rng.randrange(2, 500))} if rng.randrange(3) == 0 else {}
    header = syntax.function(name, params, defaults, is_async=rng.randrange(8) == 0)
    body = BodyWriter(syntax, rng, rng, helpers, params).body(body_lines)
    return [header, *body, *_closing(syntax)]


def seed_group(syntax: Syntax, seed: int) -> SeedGroup:
    """Generate one seed's helpers and target/decoy pairs from ``random.Random(seed)`` alone."""
    rng = random.Random(seed)
    registry = names.NameRegistry()
    helper_names = tuple(registry.claim(rng, names.function_name) for _ in range(HELPERS_PER_SEED))
    helpers = []
    for helper in helper_names:
        params = _params(rng, 3)
        header = syntax.function(helper, params, {params[2]: str(rng.randrange(2, 100))})
        body = BodyWriter(syntax, rng, rng, (), params).body(rng.randint(*HELPER_BODY_LINES))
        helpers.append(Chunk((header, *body, *_closing(syntax), *SEPARATOR), 1))
    pairs = tuple(
        _target_pair(syntax, rng, registry, seed, helper_names) for _ in range(TARGETS_PER_SEED)
    )
    return SeedGroup(seed, helper_names, tuple(helpers), pairs)


def _decoy_name(rng: random.Random, stem: str, number: int) -> str:
    """A near miss of ``stem_number``: a neighbouring number, or the underscore dropped."""
    return rng.choice((f"{stem}_{number + 1}", f"{stem}_{number - 1}", f"{stem}{number}"))


def _target_pair(
    syntax: Syntax,
    rng: random.Random,
    registry: names.NameRegistry,
    seed: int,
    helpers: tuple[str, ...],
) -> TargetPair:
    while True:
        stem, number = names.function_stem(rng), rng.randrange(2, 98)
        name, decoy = f"{stem}_{number}", _decoy_name(rng, stem, number)
        if name not in registry and decoy not in registry:
            registry.reserve(name)
            registry.reserve(decoy)
            break
    params = _params(rng, rng.randint(2, 4))
    defaults = {params[-1]: str(rng.randrange(2, 1000))} if rng.randrange(2) else {}
    shape_seed, value_seed, decoy_value_seed = (rng.getrandbits(64) for _ in range(3))
    target_body = BodyWriter(
        syntax, random.Random(shape_seed), random.Random(value_seed), helpers, params
    ).body(rng.randint(*TARGET_BODY_LINES))
    # Same shape stream, different values: the decoy opens like its target.
    decoy_body = BodyWriter(
        syntax, random.Random(shape_seed), random.Random(decoy_value_seed), helpers, params
    ).body(rng.randint(*DECOY_BODY_LINES))
    closing = _closing(syntax)
    target = [syntax.function(name, params, defaults), *target_body, *closing, *SEPARATOR]
    decoy_lines = [syntax.function(decoy, params, defaults), *decoy_body, *closing, *SEPARATOR]
    decoy_first = rng.randrange(2) == 0
    lines = decoy_lines + target if decoy_first else target + decoy_lines
    offset = len(decoy_lines) + 1 if decoy_first else 1
    return TargetPair(seed, name, decoy, len(target_body), Chunk(tuple(lines), 2), offset)


class FillerWriter:
    """Distractor chunks of an exact line count: functions, classes, module constants."""

    def __init__(
        self,
        syntax: Syntax,
        rng: random.Random,
        registry: names.NameRegistry,
        helpers: tuple[str, ...],
    ) -> None:
        self.syntax = syntax
        self.rng = rng
        self.registry = registry
        self.helpers = helpers

    def chunk(self, n_lines: int) -> Chunk:
        """One chunk of exactly ``n_lines`` lines (separator included)."""
        closers = self.syntax.closers
        kinds: list[tuple[int, str]] = []
        if 3 <= n_lines <= 10:
            kinds.append((1, "constants"))
        if 4 + closers <= n_lines <= MAX_CHUNK_LINES:
            kinds.append((5, "function"))
        if 8 + 2 * closers <= n_lines <= MAX_CLASS_LINES + 2:
            kinds.append((2, "class"))
        if not kinds:
            return Chunk(("",) * n_lines, 0)
        kind = weighted(self.rng, kinds)
        if kind == "constants":
            return self._constants(n_lines - len(SEPARATOR))
        if kind == "function":
            name = self.registry.claim(self.rng, names.function_name)
            body_lines = n_lines - 1 - closers - len(SEPARATOR)
            lines = _function(self.syntax, self.rng, name, self.helpers, body_lines)
            return Chunk((*lines, *SEPARATOR), 1)
        return self._class(n_lines - len(SEPARATOR))

    def _constants(self, count: int) -> Chunk:
        rng = self.rng
        lines = []
        for _ in range(count):
            name = self.registry.claim(rng, names.constant_name)
            if rng.randrange(3) == 0:
                value = self.syntax.tuple_literal(
                    [int_literal(rng), int_literal(rng), constant(rng)]
                )
            else:
                value = constant(rng) if rng.randrange(3) else text_literal(rng)
            lines.append(self.syntax.constant(name, value))
        return Chunk((*lines, *SEPARATOR), 0)

    def _class(self, total: int) -> Chunk:
        """``total`` lines: header, docstring, a few attributes, blank-separated methods and
        the closing line where the syntax has one."""
        rng, syntax = self.rng, self.syntax
        closers, indent = syntax.closers, syntax.indent
        lines = [syntax.class_header(self.registry.claim(rng, names.class_name))]
        lines.append(indent + syntax.doc(f"{phrase(rng)}."))
        for _ in range(rng.randint(0, min(2, total - 5 - 2 * closers))):
            name = self.registry.claim(rng, names.local_name)
            lines.append(indent + syntax.attribute(name, constant(rng)))
        remaining = total - len(lines) - closers
        cheapest = 3 + closers  # blank + header + one body line (+ closing brace)
        methods = 0
        while remaining > 0:
            if remaining <= MAX_METHOD_COST:
                cost = remaining
            else:
                cost = rng.randint(cheapest, min(MAX_METHOD_COST, remaining - cheapest))
            name = self.registry.claim(rng, names.function_name)
            lines.append("")
            lines.extend(_method(syntax, rng, name, self.helpers, cost - 2 - closers))
            remaining -= cost
            methods += 1
        lines.extend(_closing(syntax))
        return Chunk((*lines, *SEPARATOR), methods)


def _method(
    syntax: Syntax, rng: random.Random, name: str, helpers: tuple[str, ...], body_lines: int
) -> list[str]:
    params = _params(rng, rng.randint(1, 2))
    body = BodyWriter(syntax, rng, rng, helpers, params).body(body_lines, 2)
    return [syntax.indent + syntax.method(name, params), *body, *_closing(syntax, 1)]
