"""Blank the C and C++ macro lines a grammar cannot read, before the file is parsed.

Real C and C++ put attribute, export and namespace macros on lines of their own before
definitions (``JSON_HEDLEY_WARN_UNUSED_RESULT``, ``NLOHMANN_JSON_NAMESPACE_BEGIN``,
``Q_OBJECT``, ``BOOST_FORCEINLINE``), and wrap ``try``/``catch`` in macros
(``JSON_TRY`` … ``JSON_CATCH (...)``). Without a preprocessor tree-sitter reads such a line
as a type, or as a function call glued to the next declaration, and the definitions after
it come out as errors or not at all. So a line holding nothing but one macro-style name
(upper case with an underscore: what C programmers name macros) and, optionally, its
parenthesised arguments and a trailing ``//`` comment is replaced by spaces of the same
length. Rows and byte offsets are unchanged, so every definition's lines are still the
file's own lines; only the tree is read from the blanked copy. A macro line is never part
of a signature, as with attributes and decorators.
"""

from __future__ import annotations

import re

#: ``JSON_TRY``, ``_NLOHMANN_X``, ``Q_DECL_EXPORT``: upper case, at least one underscore.
_MACRO_LINE = re.compile(rb"^[ \t]*(_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+)[ \t]*")


def blank_macro_lines(source: bytes) -> bytes:
    """``source`` with every stand-alone macro line (see the module docstring) blanked."""
    lines = source.split(b"\n")
    changed = False
    for index, line in enumerate(lines):
        end = _macro_end(line)
        if end is not None:
            lines[index] = b" " * end + line[end:]
            changed = True
    return b"\n".join(lines) if changed else source


def _macro_end(line: bytes) -> int | None:
    """Where the macro (with its arguments) ends on ``line``, or None when the line is
    anything else: a statement (``FOO(x);``), a call whose arguments go on, a label."""
    match = _MACRO_LINE.match(line)
    if match is None:
        return None
    end = match.end()
    if line[end : end + 1] == b"(":
        close = _closing_paren(line, end)
        if close is None:
            return None
        end = close + 1
    rest = line[end:].strip()
    return end if not rest or rest.startswith(b"//") else None


def _closing_paren(line: bytes, opening: int) -> int | None:
    """The index of the parenthesis closing the one at ``opening``, if it is on this line
    (string literals skipped: ``QT_DEPRECATED_X("use f()")``)."""
    depth, index, quote = 0, opening, None
    while index < len(line):
        char = line[index : index + 1]
        if quote is not None:
            if char == b"\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in (b'"', b"'"):
            quote = char
        elif char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None
