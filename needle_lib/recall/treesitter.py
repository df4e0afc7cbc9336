"""Definitions and prose lines of a tree-sitter language (everything but Python and JS).

The per-language knowledge (which nodes define a function, which are comments) lives in
``grammars``; this module parses, walks and classifies lines the same way for all of them.

Comment classification, the same in every language so the scoring policy means one thing:
a line is prose when everything on it but whitespace lies inside comment nodes; a doc
comment (``///``, ``//!``, ``/** */``) is a *docstring*, any other comment a
*comment*. String literals, heredocs and raw strings are code even when their text looks
like a comment, because the grammar says they are strings.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from needle_lib.errors import UsageError
from needle_lib.recall.grammars import GRAMMARS, Definition, Grammar

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

COMMENT, DOCSTRING = "comment", "docstring"
Found = tuple[str, int, int, int]  # name, signature line, last signature line, last body line


class GrammarMissingError(UsageError, RuntimeError):
    """A tree-sitter grammar wheel is not installed."""


@cache
def parser_for(language: str) -> Parser:
    grammar = GRAMMARS[language]
    try:
        from tree_sitter import Language, Parser

        module = importlib.import_module(grammar.module)
    except ImportError as exc:
        raise GrammarMissingError(
            f"reading {language} needs the tree-sitter grammar {grammar.module!r} ({exc}); "
            "install with `uv sync`"
        ) from None
    return Parser(Language(getattr(module, grammar.entry)()))


def parse_tree_sitter(language: str, source: str) -> tuple[list[Found], dict[int, str]]:
    """(definitions, prose lines) of ``source``.

    Tree-sitter recovers from text its grammar cannot read (a macro it does not expand,
    syntax newer than the grammar): a definition that contains such a region is skipped,
    because its bounds would be a recovery guess, and the rest of the file is read as
    usual. A file with such a region and no readable definition at all is a
    ``SyntaxError`` naming the first unreadable line: most likely not that language.
    Grammars with ``tolerate_paired_errors`` (C, C++) keep a definition whose unreadable
    text neither skips nor invents a brace (``_braces_paired``).
    """
    grammar = GRAMMARS[language]
    data = source.encode("utf-8")
    readable = grammar.prepare(data) if grammar.prepare is not None else data
    root = parser_for(language).parse(readable).root_node
    found: list[Found] = []
    comments: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in grammar.comments:
            comments.append(node)
            continue
        rule = grammar.rules.get(node.type)
        definition = rule(node) if rule is not None and _clear_before(node) else None
        if definition is not None and _readable(node, definition, grammar):
            found.append(_found(definition, grammar))
        stack.extend(reversed(node.children))
    if root.has_error and not found:
        raise SyntaxError(_first_error(root))
    return found, _prose_lines(comments, data.split(b"\n"))


def _clear_before(node: Node) -> bool:
    """No unreadable text just before the definition on its first row (there the grammar
    resynchronised mid-declaration: its start and name are guesses)."""
    before = node.prev_sibling
    return before is None or not (before.is_error and before.end_point.row >= node.start_point.row)


def _readable(node: Node, definition: Definition, grammar: Grammar) -> bool:
    """No unreadable text inside the definition; or, where the grammar allows it, none
    that makes its bounds a guess."""
    if not node.has_error:
        return True
    return grammar.tolerate_paired_errors and _braces_paired(node, definition)


_BRACES = frozenset({"{", "}"})


def _braces_paired(node: Node, definition: Definition) -> bool:
    """The unreadable text of ``node`` leaves its bounds exact: the definition does not
    begin with it, the closing row is clear of it, and none of it skipped a brace (an ERROR
    holding one) or invented one (a MISSING brace), nor, before the body, a ``;``.

    Why that is enough: the body's bounds are its braces, every other brace between them
    was then paired by a well-formed node, so the bounds are the source's own; and a
    signature whose unreadable text holds no ``;`` is not the tail of another declaration.
    The error only mis-reads a statement or a parameter (``this->operator[](i)``,
    ``BOOST_RV_REF(Fn) fn``, a ``;`` missing in a dead ``#if`` branch). Where the name
    itself is a guess is the grammar rule's to say (``grammars._c_function``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_missing or current.is_error:
            if current.start_byte <= node.start_byte or current.end_point.row >= definition.closes:
                return False
            if current.is_missing and current.type in _BRACES:
                return False
            stoppers = _BRACES | {";"} if current.start_point.row <= definition.opens else _BRACES
            if current.is_error and _holds(current, stoppers):
                return False
        else:
            stack.extend(c for c in current.children if c.has_error or c.is_missing)
    return True


def _holds(node: Node, types: frozenset[str]) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            return True
        stack.extend(current.children)
    return False


def _found(definition: Definition, grammar: Grammar) -> Found:
    first = _first_token(definition.start, grammar.decorations | grammar.comments)
    start = (first or definition.start).start_point.row
    return (definition.name, start + 1, definition.opens + 1, definition.closes)


def _first_token(node: Node, skip: frozenset[str]) -> Node | None:
    """The first leaf of ``node`` outside annotations, attributes and comments."""
    if node.child_count == 0:
        return node
    for child in node.children:
        if child.type in skip:
            continue
        leaf = _first_token(child, skip)
        if leaf is not None:
            return leaf
    return None


def _first_error(root: Node) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            what = f"missing {node.type!r}" if node.is_missing else "unexpected text"
            return f"line {node.start_point.row + 1}: {what}"
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return "the grammar rejected the file"


_DOC_OPENERS = (b"///", b"//!", b"/**")


def _is_doc(comment: bytes) -> bool:
    return comment.startswith(_DOC_OPENERS) and not comment.startswith((b"////", b"/**/"))


def _prose_lines(comments: list[Node], lines: list[bytes]) -> dict[int, str]:
    """Lines (1-based) whose text outside comment nodes is whitespace, with their kind: a
    docstring when a doc comment covers part of the line, else a comment."""
    spans: dict[int, list[tuple[int, int, str]]] = {}
    for node in comments:
        kind = DOCSTRING if _is_doc(node.text or b"") else COMMENT
        (first, first_col), (last, last_col) = node.start_point, node.end_point
        for row in range(first, last + 1):
            begin = first_col if row == first else 0
            end = last_col if row == last else len(lines[row])
            spans.setdefault(row, []).append((begin, end, kind))
    prose: dict[int, str] = {}
    for row, covered in spans.items():
        line = bytearray(lines[row])
        for begin, end, _ in covered:
            line[begin:end] = b" " * (end - begin)
        if not line.strip():
            kinds = {kind for _, _, kind in covered}
            prose[row + 1] = DOCSTRING if DOCSTRING in kinds else COMMENT
    return prose
