"""Universal Ctags as an independent reference for function extraction.

The extraction tests and ``benchmarks/extract_vs_ctags.py`` both ask ctags (a parser that
shares no code with tree-sitter) which functions a real file defines and where each one
ends, and compare. ctags is a Debian package (``universal-ctags``), not a Python
dependency: ``CtagsMissingError`` says how to install it.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from needle_lib.errors import UsageError
from needle_lib.recall.corpus import build_corpus
from needle_lib.recall.extract import FunctionDef, parse_corpus
from needle_lib.recall.languages import LANGUAGES, language_of

#: ctags kinds that are function definitions, for the languages it reads well (its
#: TypeScript parser misses most class methods; the tests count TypeScript against the
#: TypeScript compiler instead).
CTAGS_KINDS = {
    "go": frozenset({"func"}),
    "rust": frozenset({"function", "method"}),
    "java": frozenset({"method"}),
    "ruby": frozenset({"method", "singletonMethod"}),
    "c": frozenset({"function"}),
    "cpp": frozenset({"function"}),
}
#: ctags' own language names, forced so that both parsers read a ``.h`` file the same way.
_CTAGS_LANGUAGE = {"c": "C", "cpp": "C++"}

INSTALL = "apt-get install -y universal-ctags"


class CtagsMissingError(UsageError, RuntimeError):
    """Universal Ctags is not installed."""


@dataclass(frozen=True)
class CtagsFunction:
    """One function definition as ctags reports it."""

    name: str  # plain_name() of ctags' name
    line: int  # the line ctags tags: the one holding the name
    end: int | None  # the line of the closing brace; None where ctags gives none (Rust)

    def spans(self, lines: int) -> bool:
        """More than ``lines`` lines from the name's line to the closing one, exclusive:
        ctags' measure of a body of at least ``lines`` lines."""
        return self.end is not None and self.end - self.line - 1 >= lines


def plain_name(name: str) -> str:
    """``Widget::operator []`` and ``operator[]`` alike: the last component, no spaces."""
    last = name.split("::")[-1]
    return "".join(last.split()) if "operator" in last else last


def ctags_functions(path: Path, language: str) -> list[CtagsFunction]:
    """The function definitions ctags finds in ``path`` read as ``language``, anonymous
    ones (``__anon…``) and single-line ones aside."""
    if shutil.which("ctags") is None or "Universal Ctags" not in _version():
        raise CtagsMissingError(f"universal-ctags is not installed ({INSTALL})")
    command = ["ctags", "--fields=+neK", "-x", "--_xformat=%K\t%N\t%n\t%e", "-o", "-"]
    if language in _CTAGS_LANGUAGE:
        command.append(f"--language-force={_CTAGS_LANGUAGE[language]}")
    out = subprocess.run([*command, str(path)], capture_output=True, text=True, check=True).stdout
    functions: list[CtagsFunction] = []
    for row in out.splitlines():
        kind, name, line, end = row.split("\t")
        if kind not in CTAGS_KINDS[language] or name.startswith("__anon"):
            continue
        function = CtagsFunction(plain_name(name), int(line), int(end) if end else None)
        if function.end is None or function.end > function.line:
            functions.append(function)
    return functions


def _version() -> str:
    return subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout


@dataclass(frozen=True)
class Agreement:
    """How the extractor's functions of one file compare with ctags' (see ``compare``)."""

    path: Path
    language: str
    min_body: int
    theirs: tuple[CtagsFunction, ...]  # every multi-line function ctags finds
    reference: tuple[CtagsFunction, ...]  # of those, the ones spanning >= min_body lines
    missed: tuple[CtagsFunction, ...]  # of those, no extracted function has the name
    misplaced: tuple[CtagsFunction, ...]  # named, but none at that line ending there
    wrong: tuple[tuple[FunctionDef, CtagsFunction], ...]  # same place, another end
    extracted: tuple[FunctionDef, ...]  # every extracted multi-line function

    @property
    def recall_by_name(self) -> float:
        found = len(self.reference) - len(self.missed)
        return found / len(self.reference) if self.reference else 1.0


def compare(path: Path, language: str, min_body: int = 20) -> Agreement:
    """Extract ``path`` as ``language`` and hold it against ctags.

    Recall is by name, as the issue states it: a ctags function spanning at least
    ``min_body`` lines is found when an extracted function has its name. A *wrong body* is
    an extracted function at the place ctags names (ctags' line inside its signature) that
    closes on another line than ctags says: a body that is not that definition's lines."""
    text = path.read_bytes().decode("utf-8")
    parsed = parse_corpus(build_corpus(path.name, [(_shown_name(path, text, language), text)]))
    extracted = tuple(f for f in parsed.functions if f.body_end >= f.signature_line)
    theirs = ctags_functions(path, language)
    names = {plain_name(f.name) for f in extracted}
    reference = tuple(f for f in theirs if f.spans(min_body))
    wrong: list[tuple[FunctionDef, CtagsFunction]] = []
    misplaced: list[CtagsFunction] = []
    for function in theirs:
        at_place = [f for f in extracted if same_place(f, function)]
        if function.end is not None:
            wrong.extend((f, function) for f in at_place if f.body_end + 1 != function.end)
        if function in reference and function.name in names and not at_place:
            misplaced.append(function)
    return Agreement(
        path=path,
        language=language,
        min_body=min_body,
        theirs=tuple(theirs),
        reference=reference,
        missed=tuple(f for f in reference if f.name not in names),
        misplaced=tuple(misplaced),
        wrong=tuple(wrong),
        extracted=extracted,
    )


def same_place(ours: FunctionDef, theirs: CtagsFunction) -> bool:
    """The same name, and ctags' line (the name's) inside the extracted signature."""
    return plain_name(ours.name) == theirs.name and (
        ours.signature_line <= theirs.line < ours.body_start
    )


def _shown_name(path: Path, text: str, language: str) -> str:
    """A name that selects ``language`` (a C header read as C++, say)."""
    current = language_of(path.name, text)
    if current is not None and current.name == language:
        return path.name
    return path.name + LANGUAGES[language].extensions[0]
