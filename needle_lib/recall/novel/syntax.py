"""How a novel flavour writes code: the syntax, never the structure.

The generator decides what a body contains (which statement shapes, how many lines each,
which names and constants) from its RNG streams; a ``Syntax`` only spells each statement.
So every flavour draws the same random numbers for the same shapes and shares every size,
layout and eligibility rule, and a new language is one subclass.

What a flavour must keep, because the generator counts on it:

- every method returns exactly one line (multi-line statements are emitted line by line);
- a block costs its Python line count plus ``closers`` (1 for a closing brace, 0 for
  indentation), charged once per block, so the generator can budget lines exactly;
- each choice tuple (operators, comparisons, format specs, error names) has the length of
  Python's, so a flavour consumes the value stream exactly as Python does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class Syntax(ABC):
    """One language's spelling of the statements the novel generator writes."""

    language: str  # a key of ``languages.LANGUAGES``: how recall reads the generated files
    extension: str  # of the generated files, e.g. ".py"
    indent: str  # one indentation level
    closers: int  # lines a block needs after its body (a closing brace), 0 or 1
    operators: tuple[str, ...]
    augmented = ("+=", "-=", "*=", "^=", "|=", "%=")
    comparisons: tuple[str, ...]
    format_specs: tuple[str, ...]
    errors: tuple[str, ...]

    # --- declarations -------------------------------------------------------------------

    @abstractmethod
    def function(
        self, name: str, params: Sequence[str], defaults: dict[str, str], is_async: bool = False
    ) -> str:
        """A top-level function's header line."""

    @abstractmethod
    def method(self, name: str, params: Sequence[str]) -> str:
        """A method header, unindented (the caller indents it)."""

    @abstractmethod
    def class_header(self, name: str) -> str: ...

    @abstractmethod
    def attribute(self, name: str, value: str) -> str:
        """A class attribute, unindented."""

    @abstractmethod
    def constant(self, name: str, value: str) -> str:
        """A module constant."""

    @abstractmethod
    def tuple_literal(self, items: Sequence[str]) -> str: ...

    def close(self) -> str:
        """The line that ends a block (only called when ``closers`` is 1)."""
        return "}"

    @abstractmethod
    def file_header(self, title: str, detail: str) -> tuple[str, ...]:
        """The lines that open a generated file (blank separator lines included)."""

    @abstractmethod
    def comment(self, text: str) -> str: ...

    @abstractmethod
    def doc(self, text: str) -> str:
        """A one-line documentation string or doc comment."""

    # --- statements ---------------------------------------------------------------------

    @abstractmethod
    def declare(self, name: str, value: str) -> str:
        """A new local bound to ``value``."""

    @abstractmethod
    def declare_open(self, name: str, opening: str) -> str:
        """The first line of a new local bound to a multi-line value (``{`` or ``f(``)."""

    @abstractmethod
    def statement(self, text: str) -> str:
        """An expression or assignment statement."""

    @abstractmethod
    def end_value(self, bracket: str) -> str:
        """The line closing a multi-line value opened by ``declare``."""

    @abstractmethod
    def give_back(self, value: str) -> str:
        """A return statement."""

    @abstractmethod
    def swap(self, first: str, second: str, new_first: str, new_second: str) -> str: ...

    @abstractmethod
    def append(self, target: str, value: str) -> str: ...

    @abstractmethod
    def if_(self, condition: str) -> str: ...

    @abstractmethod
    def else_(self) -> str: ...

    @abstractmethod
    def for_range(self, name: str, stop: int) -> str: ...

    @abstractmethod
    def for_each(self, name: str, items: str) -> str: ...

    @abstractmethod
    def while_(self, condition: str) -> str: ...

    @abstractmethod
    def try_(self) -> str: ...

    @abstractmethod
    def catch(self, error: str) -> str: ...

    # --- expressions --------------------------------------------------------------------

    @abstractmethod
    def pair(self, first: str, second: str) -> str:
        """Two values returned together."""

    @abstractmethod
    def length(self, items: str) -> str: ...

    @abstractmethod
    def lookup(self, mapping: str, key: str, fallback: str) -> str: ...

    @abstractmethod
    def call_builtin(self, name: str, *args: str) -> str:
        """``abs``, ``min`` or ``max`` of ``args``."""

    @abstractmethod
    def contains(self, items: str, value: str) -> str: ...

    @abstractmethod
    def mapped(self, item: str, expression: str, items: str) -> str:
        """Every element of ``items`` bound to ``item`` and mapped through ``expression``."""

    @abstractmethod
    def formatted(self, value: str, spec: str, tag: str) -> str: ...


class PythonSyntax(Syntax):
    """The original flavour: its output is pinned byte for byte by the shipped fixtures."""

    language = "python"
    extension = ".py"
    indent = "    "
    closers = 0
    operators = ("+", "-", "*", "//", "%", "^", "|", "&")
    comparisons = ("<", ">", "<=", ">=", "!=", "==")
    format_specs = ("04x", "06d", ">8", "x", "08b")
    errors = ("KeyError", "ValueError", "(KeyError, IndexError)")

    def function(
        self, name: str, params: Sequence[str], defaults: dict[str, str], is_async: bool = False
    ) -> str:
        rendered = [f"{p}={defaults[p]}" if p in defaults else p for p in params]
        keyword = "async def" if is_async else "def"
        return f"{keyword} {name}({', '.join(rendered)}):"

    def method(self, name: str, params: Sequence[str]) -> str:
        return self.function(name, ["self", *params], {})

    def class_header(self, name: str) -> str:
        return f"class {name}:"

    def attribute(self, name: str, value: str) -> str:
        return f"{name} = {value}"

    def constant(self, name: str, value: str) -> str:
        return f"{name} = {value}"

    def tuple_literal(self, items: Sequence[str]) -> str:
        return f"({', '.join(items)})"

    def file_header(self, title: str, detail: str) -> tuple[str, ...]:
        return (f'"""{title}', "", detail, '"""', "", "")

    def comment(self, text: str) -> str:
        return f"# {text}"

    def doc(self, text: str) -> str:
        return f'"""{text}"""'

    def declare(self, name: str, value: str) -> str:
        return f"{name} = {value}"

    def declare_open(self, name: str, opening: str) -> str:
        return f"{name} = {opening}"

    def statement(self, text: str) -> str:
        return text

    def end_value(self, bracket: str) -> str:
        return bracket

    def give_back(self, value: str) -> str:
        return f"return {value}"

    def swap(self, first: str, second: str, new_first: str, new_second: str) -> str:
        return f"{first}, {second} = {new_first}, {new_second}"

    def append(self, target: str, value: str) -> str:
        return f"{target}.append({value})"

    def if_(self, condition: str) -> str:
        return f"if {condition}:"

    def else_(self) -> str:
        return "else:"

    def for_range(self, name: str, stop: int) -> str:
        return f"for {name} in range({stop}):"

    def for_each(self, name: str, items: str) -> str:
        return f"for {name} in {items}:"

    def while_(self, condition: str) -> str:
        return f"while {condition}:"

    def try_(self) -> str:
        return "try:"

    def catch(self, error: str) -> str:
        return f"except {error}:"

    def pair(self, first: str, second: str) -> str:
        return f"{first}, {second}"

    def length(self, items: str) -> str:
        return f"len({items})"

    def lookup(self, mapping: str, key: str, fallback: str) -> str:
        return f"{mapping}.get({key}, {fallback})"

    def call_builtin(self, name: str, *args: str) -> str:
        return f"{name}({', '.join(args)})"

    def contains(self, items: str, value: str) -> str:
        return f"{value} in {items}"

    def mapped(self, item: str, expression: str, items: str) -> str:
        return f"[{expression} for {item} in {items}]"

    def formatted(self, value: str, spec: str, tag: str) -> str:
        return f'f"{{{value}:{spec}}}-{tag}"'


class TypeScriptSyntax(Syntax):
    """A C-family flavour: braces, semicolons, typed parameters.

    Locals are ``var``, not ``let``: the generator may use a local after the block that
    bound it, as Python's function scope allows, and ``var`` is function-scoped too. Python's
    floor division ``//`` would open a comment here, so its slot holds ``>>``; equality is
    strict (``===``), as TypeScript style asks.
    """

    language = "typescript"
    extension = ".ts"
    indent = "  "
    closers = 1
    operators = ("+", "-", "*", ">>", "%", "^", "|", "&")
    comparisons = ("<", ">", "<=", ">=", "!==", "===")
    format_specs = ("toString(16)", "toFixed(2)", "toString(36)", "toString(8)", "toString(2)")
    errors = ("err", "e", "error")

    def _params(self, params: Sequence[str], defaults: dict[str, str]) -> str:
        return ", ".join(
            f"{p}: number = {defaults[p]}" if p in defaults else f"{p}: number" for p in params
        )

    def function(
        self, name: str, params: Sequence[str], defaults: dict[str, str], is_async: bool = False
    ) -> str:
        keyword = "async function" if is_async else "function"
        return f"{keyword} {name}({self._params(params, defaults)}) {{"

    def method(self, name: str, params: Sequence[str]) -> str:
        return f"{name}({self._params(params, {})}) {{"

    def class_header(self, name: str) -> str:
        return f"class {name} {{"

    def attribute(self, name: str, value: str) -> str:
        return f"{name} = {value};"

    def constant(self, name: str, value: str) -> str:
        return f"const {name} = {value};"

    def tuple_literal(self, items: Sequence[str]) -> str:
        return f"[{', '.join(items)}]"

    def file_header(self, title: str, detail: str) -> tuple[str, ...]:
        return (f"/* {title}", " *", f" * {detail}", " */", "", "")

    def comment(self, text: str) -> str:
        return f"// {text}"

    def doc(self, text: str) -> str:
        return f"/** {text} */"

    def declare(self, name: str, value: str) -> str:
        return f"var {name} = {value};"

    def declare_open(self, name: str, opening: str) -> str:
        return f"var {name} = {opening}"

    def statement(self, text: str) -> str:
        return f"{text};"

    def end_value(self, bracket: str) -> str:
        return f"{bracket};"

    def give_back(self, value: str) -> str:
        return f"return {value};"

    def swap(self, first: str, second: str, new_first: str, new_second: str) -> str:
        return f"[{first}, {second}] = [{new_first}, {new_second}];"

    def append(self, target: str, value: str) -> str:
        return f"{target}.push({value});"

    def if_(self, condition: str) -> str:
        return f"if ({condition}) {{"

    def else_(self) -> str:
        return "} else {"

    def for_range(self, name: str, stop: int) -> str:
        return f"for (var {name} = 0; {name} < {stop}; {name}++) {{"

    def for_each(self, name: str, items: str) -> str:
        return f"for (var {name} of {items}) {{"

    def while_(self, condition: str) -> str:
        return f"while ({condition}) {{"

    def try_(self) -> str:
        return "try {"

    def catch(self, error: str) -> str:
        return f"}} catch ({error}) {{"

    def pair(self, first: str, second: str) -> str:
        return f"[{first}, {second}]"

    def length(self, items: str) -> str:
        return f"{items}.length"

    def lookup(self, mapping: str, key: str, fallback: str) -> str:
        return f"({mapping}[{key}] ?? {fallback})"

    def call_builtin(self, name: str, *args: str) -> str:
        return f"Math.{name}({', '.join(args)})"

    def contains(self, items: str, value: str) -> str:
        return f"{items}.includes({value})"

    def mapped(self, item: str, expression: str, items: str) -> str:
        return f"{items}.map(({item}) => {expression})"

    def formatted(self, value: str, spec: str, tag: str) -> str:
        return f"`${{{value}.{spec}}}-{tag}`"


PYTHON = PythonSyntax()
TYPESCRIPT = TypeScriptSyntax()
