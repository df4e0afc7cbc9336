"""Blank the C and C++ macro names a grammar cannot read, before the file is parsed.

Real C and C++ put attribute, export and namespace macros around definitions
(``JSON_HEDLEY_WARN_UNUSED_RESULT`` on the line before, ``NLOHMANN_JSON_NAMESPACE_BEGIN``,
``class Q_CORE_EXPORT QObject``, ``f(int x) const BOOST_NOEXCEPT``) and wrap ``try`` and
``catch`` in macros (``JSON_TRY`` … ``} QT_CATCH(...) {``). Without a preprocessor
tree-sitter reads such a name as a type, a call glued to the next declaration or the
declared name, and the definitions around it come out as errors, misnamed, or not at all.

So a macro-style name (upper case with an underscore: what C programmers name macros) is
replaced by spaces of the same length where it stands:

- alone on its line, with its arguments, a trailing ``//`` comment, a ``}`` before it or a
  ``{`` after it;
- right after a parameter list (``const`` aside), with arguments holding no parentheses;
- between ``class``, ``struct`` or ``union`` and the name.

Rows and byte offsets are unchanged, so every definition's lines are still the file's own
lines; only the tree is read from the blanked copy, and a blanked line is never part of a
signature, as with attributes. Preprocessor lines (and their continuations) are left alone,
and so is a name inside a declaration (``static BOOST_FORCEINLINE void f()``): the grammar
reads it as the type and the real type as unreadable text, which ``grammars._c_function``
allows before a parameter list.
"""

from __future__ import annotations

import re

_NAME = rb"_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+"  # JSON_TRY, Q_DECL_EXPORT: upper case, an underscore
#: ``JSON_TRY``, ``} QT_CATCH(...) {``, ``NLOHMANN_JSON_NAMESPACE_BEGIN // note``: the name
#: may follow the brace closing a block and precede the one opening the next.
_LEADING = re.compile(rb"^[ \t]*(?:\}[ \t]*)?(" + _NAME + rb")[ \t]*")
#: ``bool f(int x) const BOOST_NOEXCEPT {``, ``V f(V x) BOOST_MATH_NOEXCEPT(V)``: one name
#: after the parameters, with arguments that hold no parentheses.
_TRAILING = re.compile(
    rb"\)[ \t]*(?:const[ \t]+)?(" + _NAME + rb"(?:[ \t]*\([^()]*\))?)[ \t]*[{;]?[ \t]*(?://.*)?$"
)


#: ``class Q_CORE_EXPORT QObject``: an export macro between the keyword and the name.
_EXPORT = re.compile(rb"\b(?:class|struct|union)[ \t]+(" + _NAME + rb")[ \t]+[A-Za-z_]")


def blank_macro_lines(source: bytes) -> bytes:
    """``source`` with the macro names of the module docstring turned into spaces."""
    lines = source.split(b"\n")
    changed = directive = False
    for index, line in enumerate(lines):
        # a preprocessor line and its continuations are the preprocessor's, not the grammar's
        directive = directive or line.lstrip().startswith(b"#")
        if directive:
            directive = line.rstrip().endswith(b"\\")
            continue
        for begin, end in (_leading_macro(line), _trailing_macro(line), _export_macro(line)):
            if begin < end:
                line = line[:begin] + b" " * (end - begin) + line[end:]
                changed = True
        lines[index] = line
    return b"\n".join(lines) if changed else source


def _leading_macro(line: bytes) -> tuple[int, int]:
    """The span of a line's macro standing alone (arguments included), or an empty span
    when the line is anything else: a statement (``FOO(x);``), a call whose arguments go
    on, a label, a declaration whose type is an upper-case name."""
    match = _LEADING.match(line)
    if match is None:
        return (0, 0)
    begin, end = match.span(1)
    rest = line[match.end() :]
    if rest.startswith(b"("):
        close = _closing_paren(rest, 0)
        if close is None:
            return (0, 0)
        rest = rest[close + 1 :]
        end = match.end() + close + 1
    rest = rest.strip()
    if rest.startswith(b"{"):
        rest = rest[1:].strip()
    return (begin, end) if not rest or rest.startswith(b"//") else (0, 0)


def _trailing_macro(line: bytes) -> tuple[int, int]:
    match = _TRAILING.search(line)
    return match.span(1) if match is not None else (0, 0)


def _export_macro(line: bytes) -> tuple[int, int]:
    match = _EXPORT.search(line)
    return match.span(1) if match is not None else (0, 0)


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
