"""Function bodies of an exact line count, built from varied statement shapes.

Exact, because the corpus layout puts every target at a fixed fraction of its file, so every
chunk must occupy a known number of lines. Varied, because a recalled line must not be
inferable from its neighbours: shapes, names and constants are all drawn at random.

A writer draws from two RNGs: ``shape`` picks statement shapes, names and helpers, ``value``
picks constants and operators. A decoy replays its target's shape stream with its own value
stream, so it opens the same way (same names, same statement shapes) with different values.

The writer owns the structure (which shapes, how many lines each); a ``Syntax`` spells them,
so every flavour draws the same numbers for the same shapes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from needle_lib.recall.novel import names
from needle_lib.recall.novel.syntax import Syntax

_MAX_LEVEL = 3  # deepest indentation level (in units of 4 spaces) a block may open
_MAX_COMMENTS = 1  # keep bodies ~96 % code: prose is recallable but is not code recall


_T = TypeVar("_T")


def weighted(rng: random.Random, options: Sequence[tuple[int, _T]]) -> _T:
    """Pick by integer weight; integer arithmetic only, so every platform picks the same."""
    pick = rng.randrange(sum(weight for weight, _ in options))
    for weight, option in options:
        if pick < weight:
            return option
        pick -= weight
    raise AssertionError("unreachable: pick is below the total weight")


def int_literal(rng: random.Random) -> str:
    """An integer literal of a random width and notation: ``41``, ``0x2F``, ``-87``.

    At most three digits: tokenizers spend a token per digit, and a wider constant is no
    harder to recall than a narrower one, only more expensive.
    """
    form = rng.randrange(5)
    if form < 2:
        return str(rng.randrange(2, 100))
    if form == 2:
        return str(rng.randrange(100, 1000))
    if form == 3:
        return f"0x{rng.randrange(0x10, 0x100):X}"
    return f"-{rng.randrange(2, 100)}"


def constant(rng: random.Random) -> str:
    """An int or a three-decimal float, built from integers so no platform rounds it."""
    if rng.randrange(6) == 0:
        return f"{rng.randrange(10)}.{rng.randrange(100):02d}"
    return int_literal(rng)


def text_literal(rng: random.Random) -> str:
    """A quoted opaque tag or nonsense word."""
    if rng.randrange(3) == 0:
        return f'"{names.token(rng)}"'
    return f'"{names.word(rng, 1)}"'


def phrase(rng: random.Random) -> str:
    """A docstring/comment sentence of nonsense words; prose a model can only recall."""
    words = [names.word(rng, rng.randint(1, 2)) for _ in range(3)]
    return f"{words[0].capitalize()} the {names.token(rng)} {words[1]} into {words[2]}"


class BodyWriter:
    """Writes one function body; construct a new writer per function."""

    def __init__(
        self,
        syntax: Syntax,
        shape: random.Random,
        value: random.Random,
        helpers: Sequence[str],
        params: Sequence[str],
    ) -> None:
        self.syntax = syntax
        self.shape = shape
        self.value = value
        self.helpers = list(helpers)
        self.nums = list(params)
        self.lists: list[str] = []
        self.dicts: list[str] = []
        self.taken: dict[str, None] = dict.fromkeys(params)
        self.comments = 0
        self.lines: list[str] = []
        closers = syntax.closers
        self._shapes: list[tuple[int, int, Callable[[int, int], int], bool]] = [
            # (weight, minimum lines, emitter, may appear inside a nested block)
            # Weighted towards short statements and block structure: a line costs tokens in
            # the context, and short lines recall no more easily than long ones.
            (8, 1, self._assign, True),
            (4, 1, self._augment, True),
            (2, 1, self._inline_list, True),
            (2, 1, self._inline_dict, True),
            (2, 1, self._call, True),
            (1, 1, self._comprehension, True),
            (1, 1, self._swap, True),
            (1, 1, self._format, True),
            (2, 1, self._lookup, True),
            (1, 1, self._store, True),
            (1, 1, self._append, True),
            (1, 1, self._comment, False),
            (3, 3, self._multiline_dict, True),
            (1, 3, self._multiline_call, True),
            (4, 2 + closers, self._if, True),
            (3, 2 + closers, self._for, True),
            (1, 3 + closers, self._while, True),
            (2, 4 + closers, self._try, True),
        ]

    # --- public -------------------------------------------------------------------------

    def body(self, n_lines: int, level: int = 1) -> list[str]:
        """Exactly ``n_lines`` lines at ``level``: maybe a docstring, statements, a return."""
        if n_lines < 1:
            raise ValueError(f"a function body needs at least one line, got {n_lines}")
        remaining = n_lines - 1
        if remaining >= 3 and self.shape.randrange(2) == 0:
            self._emit(level, self.syntax.doc(f"{phrase(self.value)}."))
            remaining -= 1
        self._fill(level, remaining, top=True)
        self._emit(level, self.syntax.give_back(self._return_value()))
        return self.lines

    # --- structure ----------------------------------------------------------------------

    def _emit(self, level: int, text: str) -> None:
        self.lines.append(self.syntax.indent * level + text)

    def _close(self, level: int) -> None:
        """End a block: a closing line where the syntax has one."""
        if self.syntax.closers:
            self._emit(level, self.syntax.close())

    def _fill(self, level: int, n_lines: int, top: bool = False) -> None:
        while n_lines > 0:
            n_lines -= self._statement(level, n_lines, top)

    def _statement(self, level: int, budget: int, top: bool) -> int:
        candidates = [
            (weight, emit)
            for weight, minimum, emit, nested in self._shapes
            if minimum <= budget and (nested or top) and (minimum == 1 or level < _MAX_LEVEL)
        ]
        return weighted(self.shape, candidates)(level, budget)

    def _inner(self, budget: int, most: int = 4) -> int:
        return self.shape.randint(1, max(1, min(most, budget)))

    def _new(self) -> str:
        while True:
            name = names.local_name(self.shape)
            if name not in self.taken:
                self.taken[name] = None
                return name

    # --- operands -----------------------------------------------------------------------

    def _num(self) -> str:
        return self.shape.choice(self.nums)

    def _list(self) -> str:
        if not self.lists:
            return f"[{self._int()}, {self._num()}, {self._int()}]"
        return self.shape.choice(self.lists)

    def _int(self) -> str:
        return int_literal(self.value)

    def _const(self) -> str:
        return constant(self.value)

    def _text(self) -> str:
        return text_literal(self.value)

    def _op(self) -> str:
        return self.value.choice(self.syntax.operators)

    def _expr(self) -> str:
        syntax = self.syntax
        form = self.shape.randrange(10)
        if form == 0 and self.helpers:
            return f"{self.shape.choice(self.helpers)}({self._num()}, {self._int()})"
        if form == 1:
            return f"{self._num()} {self._op()} {self._num()}"
        if form == 2:
            return f"{syntax.length(self._list())} {self._op()} {self._int()}"
        if form == 3 and self.dicts:
            return syntax.lookup(self.shape.choice(self.dicts), self._text(), self._int())
        if form == 4:
            return syntax.call_builtin("abs", f"{self._num()} - {self._int()}")
        if form == 5:
            return syntax.call_builtin(self.shape.choice(("min", "max")), self._num(), self._int())
        return f"{self._num()} {self._op()} {self._const()}"

    def _condition(self) -> str:
        if self.shape.randrange(4) == 0:
            value = self._text()
            return self.syntax.contains(self._list(), value)
        return f"{self._num()} {self.value.choice(self.syntax.comparisons)} {self._int()}"

    def _return_value(self) -> str:
        form = self.shape.randrange(3)
        if form == 0 and self.lists:
            return self.syntax.pair(self._num(), self.shape.choice(self.lists))
        if form == 1 and self.dicts:
            return self.shape.choice(self.dicts)
        return self._expr()

    # --- one-line statements ------------------------------------------------------------

    def _declare(self, level: int, name: str, value: str) -> None:
        self._emit(level, self.syntax.declare(name, value))

    def _assign(self, level: int, budget: int) -> int:
        expr = self._expr()
        name = self._new()
        self._declare(level, name, expr)
        self.nums.append(name)
        return 1

    def _augment(self, level: int, budget: int) -> int:
        target = self._num()  # draw order matters: helpers share one RNG for both streams
        operator = self.value.choice(self.syntax.augmented)
        self._emit(level, self.syntax.statement(f"{target} {operator} {self._const()}"))
        return 1

    def _inline_list(self, level: int, budget: int) -> int:
        items = [
            self._int() if self.shape.randrange(3) else self._num()
            for _ in range(self.shape.randint(2, 3))
        ]
        name = self._new()
        self._declare(level, name, f"[{', '.join(items)}]")
        self.lists.append(name)
        return 1

    def _inline_dict(self, level: int, budget: int) -> int:
        items = [f"{self._text()}: {self._const()}" for _ in range(self.shape.randint(1, 2))]
        name = self._new()
        self._declare(level, name, f"{{{', '.join(items)}}}")
        self.dicts.append(name)
        return 1

    def _call(self, level: int, budget: int) -> int:
        if not self.helpers:
            return self._assign(level, budget)
        helper = self.shape.choice(self.helpers)
        name = self._new()
        self._declare(level, name, f"{helper}({self._num()}, {self._text()})")
        self.nums.append(name)
        return 1

    def _comprehension(self, level: int, budget: int) -> int:
        item = names.word(self.shape, 1) + str(self.shape.randrange(10))
        source = self._list()
        name = self._new()
        expression = f"{item} {self._op()} {self._int()}"
        self._declare(level, name, self.syntax.mapped(item, expression, source))
        self.lists.append(name)
        return 1

    def _swap(self, level: int, budget: int) -> int:
        if len(self.nums) < 2:
            return self._assign(level, budget)
        first, second = self.shape.sample(self.nums, 2)
        new_first = f"{second} {self._op()} {self._int()}"
        new_second = f"{first} {self._op()} {self._int()}"
        self._emit(level, self.syntax.swap(first, second, new_first, new_second))
        return 1

    def _format(self, level: int, budget: int) -> int:
        spec = self.value.choice(self.syntax.format_specs)
        name = self._new()
        value = self._num()
        self._declare(level, name, self.syntax.formatted(value, spec, names.token(self.value)))
        return 1

    def _lookup(self, level: int, budget: int) -> int:
        if not self.dicts:
            return self._inline_dict(level, budget)
        source = self.shape.choice(self.dicts)
        fallback = self._num()
        name = self._new()
        self._declare(level, name, self.syntax.lookup(source, self._text(), fallback))
        self.nums.append(name)
        return 1

    def _store(self, level: int, budget: int) -> int:
        if not self.dicts:
            return self._inline_dict(level, budget)
        target = self.shape.choice(self.dicts)
        store = f"{target}[{self._text()}] = {self._num()} {self._op()} {self._int()}"
        self._emit(level, self.syntax.statement(store))
        return 1

    def _append(self, level: int, budget: int) -> int:
        if not self.lists:
            return self._inline_list(level, budget)
        target = self.shape.choice(self.lists)
        value = f"{self._num()} {self._op()} {self._const()}"
        self._emit(level, self.syntax.append(target, value))
        return 1

    def _comment(self, level: int, budget: int) -> int:
        if self.comments >= _MAX_COMMENTS:
            return self._assign(level, budget)
        self.comments += 1
        self._emit(level, self.syntax.comment(phrase(self.value).lower()))
        return 1

    # --- multi-line statements ----------------------------------------------------------

    def _multiline_dict(self, level: int, budget: int) -> int:
        entries = self._inner(budget - 2)
        name = self._new()
        self._emit(level, self.syntax.declare_open(name, "{"))
        for _ in range(entries):
            self._emit(level + 1, f"{self._text()}: {self._const()},")
        self._emit(level, self.syntax.end_value("}"))
        self.dicts.append(name)
        return entries + 2

    def _multiline_call(self, level: int, budget: int) -> int:
        if not self.helpers:
            return self._assign(level, budget)
        helper = self.shape.choice(self.helpers)
        name = self._new()
        self._emit(level, self.syntax.declare_open(name, f"{helper}("))
        self._emit(level + 1, f"{self._num()}, {self._text()}, {self._const()},")
        self._emit(level, self.syntax.end_value(")"))
        self.nums.append(name)
        return 3

    def _if(self, level: int, budget: int) -> int:
        closers = self.syntax.closers
        body = self._inner(budget - 1 - closers)
        self._emit(level, self.syntax.if_(self._condition()))
        self._fill(level + 1, body)
        used = 1 + body + closers
        if budget - used >= 2 and self.shape.randrange(2):
            other = self._inner(budget - used - 1, most=3)
            self._emit(level, self.syntax.else_())
            self._fill(level + 1, other)
            used += 1 + other
        self._close(level)
        return used

    def _for(self, level: int, budget: int) -> int:
        closers = self.syntax.closers
        body = self._inner(budget - 1 - closers)
        loop = names.word(self.shape, 1) + str(self.shape.randrange(10))
        if self.shape.randrange(2):
            header = self.syntax.for_range(loop, self.value.randrange(2, 40))
        else:
            header = self.syntax.for_each(loop, self._list())
        self._emit(level, header)
        self.nums.append(loop)
        self._fill(level + 1, body)
        self._close(level)
        return 1 + body + closers

    def _while(self, level: int, budget: int) -> int:
        closers = self.syntax.closers
        body = self._inner(budget - 2 - closers, most=3)
        counter = self._num()
        self._emit(level, self.syntax.while_(f"{counter} > {self._int()}"))
        step = self.syntax.statement(f"{counter} -= {self.value.randrange(1, 50)}")
        self._emit(level + 1, step)
        self._fill(level + 1, body)
        self._close(level)
        return 2 + body + closers

    def _try(self, level: int, budget: int) -> int:
        closers = self.syntax.closers
        body = self._inner(budget - 3 - closers, most=3)
        handler = self._inner(budget - 2 - closers - body, most=2)
        self._emit(level, self.syntax.try_())
        self._fill(level + 1, body)
        self._emit(level, self.syntax.catch(self.value.choice(self.syntax.errors)))
        self._fill(level + 1, handler)
        self._close(level)
        return 2 + body + handler + closers
