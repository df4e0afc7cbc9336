"""The languages recall can read: file extensions, comment syntax, and which parser reads them.

Python keeps ``ast`` (the language's own parser: exact docstrings, decorators, async) and
JavaScript keeps esprima (the shipped jquery corpus and its fidelity tests were pinned with
it); docs/languages.md records the measurement behind that choice. Every other language is
read with its tree-sitter grammar (small abi3 wheels, one per language, for Linux, macOS and
Windows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath


@dataclass(frozen=True)
class Language:
    """One source language as a corpus sees it."""

    name: str
    extensions: tuple[str, ...]
    line_comment: str  # the marker of a file header in a multi-file corpus
    parser: str  # "ast", "esprima" or "tree-sitter"


LANGUAGE_LIST = (
    Language("python", (".py",), "#", "ast"),
    Language("javascript", (".js", ".mjs", ".cjs"), "//", "esprima"),
    Language("typescript", (".ts", ".mts", ".cts"), "//", "tree-sitter"),
    Language("tsx", (".tsx",), "//", "tree-sitter"),
    Language("go", (".go",), "//", "tree-sitter"),
    Language("rust", (".rs",), "//", "tree-sitter"),
    Language("java", (".java",), "//", "tree-sitter"),
    Language("c", (".c", ".h"), "//", "tree-sitter"),
    Language("cpp", (".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"), "//", "tree-sitter"),
    Language("csharp", (".cs",), "//", "tree-sitter"),
    Language("ruby", (".rb",), "#", "tree-sitter"),
    Language("php", (".php",), "//", "tree-sitter"),
    Language("kotlin", (".kt", ".kts"), "//", "tree-sitter"),
    Language("swift", (".swift",), "//", "tree-sitter"),
)
LANGUAGES = {language.name: language for language in LANGUAGE_LIST}
BY_EXTENSION = {ext: language for language in LANGUAGE_LIST for ext in language.extensions}


#: Lines only C++ writes: ``namespace x``, ``template <``, ``class X``, ``public:``.
_CPP_LINE = re.compile(
    r"^[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+[A-Za-z_]|"
    r"(?:public|private|protected)[ \t]*:(?!:))",
    re.MULTILINE,
)


def language_of(path: str | PurePath, text: str | None = None) -> Language | None:
    """The language a file's extension names, or None when recall cannot read it.

    ``.h`` is C by name, but C++ projects (Qt, LLVM, Boost's ``.h`` files) name their
    headers so too; read as C, their classes are unreadable and their methods lost. Given
    the text, a ``.h`` file with a line only C++ writes (``namespace``, ``template <``,
    ``class X``, an access label) is C++. The cost of a wrong guess is small either way:
    the C++ grammar reads most C.
    """
    suffix = PurePath(path).suffix.lower()
    if suffix == ".h" and text is not None and _CPP_LINE.search(text):
        return LANGUAGES["cpp"]
    return BY_EXTENSION.get(suffix)


def supported_extensions() -> str:
    return ", ".join(sorted(BY_EXTENSION))
