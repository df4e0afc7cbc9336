"""Find every named function definition in a corpus, and the kind of every line.

JavaScript is parsed with esprima, Python with ``ast``, every other language with its
tree-sitter grammar (``treesitter``); each file of a corpus with its own language's parser.
A definition records its *signature text*: the verbatim source line(s) from where the
definition starts through the line that opens its body. Prompts quote that text as the
anchor, because it is guaranteed to exist in the corpus — unlike a constructed
``function <name>(`` that property- and assignment-style definitions
(``val: function( value ) {``) never contain.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from dataclasses import dataclass
from typing import Any, TypedDict

from needle_lib.errors import UsageError
from needle_lib.recall.corpus import Corpus, split_lines
from needle_lib.recall.languages import LANGUAGES

EXTRACTOR_VERSION = "4"  # 4: C and C++ macro lines (recall/macros.py)

CODE, BLANK, COMMENT, DOCSTRING = "code", "blank", "comment", "docstring"
PROSE_KINDS = frozenset({COMMENT, DOCSTRING})


class ExtractionError(UsageError, ValueError):
    """A corpus file could not be parsed."""


class FunctionJSON(TypedDict):
    """A ``FunctionDef`` in the parse cache: its fields, by name."""

    name: str
    file: str
    signature: str
    signature_line: int
    body_start: int
    body_end: int
    language: str


@dataclass(frozen=True)
class FunctionDef:
    """One named function definition. Line numbers are 1-based corpus lines."""

    name: str
    file: str
    signature: str
    signature_line: int
    body_start: int  # first body line
    body_end: int  # last body line (inclusive); body_end < body_start means an empty body
    language: str

    @property
    def body_length(self) -> int:
        return max(0, self.body_end - self.body_start + 1)

    @property
    def anchor(self) -> tuple[str, str]:
        """What a prompt can tell apart: the name and the signature, outer whitespace aside."""
        return (self.name, self.signature.strip())

    def to_json(self) -> FunctionJSON:
        """The definition as the parse cache stores it (``recall.cache``)."""
        return {"name": self.name, "file": self.file, "signature": self.signature,
                "signature_line": self.signature_line, "body_start": self.body_start,
                "body_end": self.body_end, "language": self.language}


@dataclass(frozen=True)
class ParsedCorpus:
    """Everything extraction learns about a corpus; cached on disk by content hash."""

    functions: tuple[FunctionDef, ...]
    kinds: tuple[str, ...]  # kinds[i] is the kind of corpus line i + 1


def parse_corpus(corpus: Corpus) -> ParsedCorpus:
    lines = corpus.lines
    kinds = [BLANK if not line.strip() else CODE for line in lines]
    functions: list[FunctionDef] = []
    for file in corpus.files:
        offset = file.first_line - 1
        source = "\n".join(lines[offset : offset + file.line_count]) + "\n"
        try:
            found, prose = _parse(file.language, source)
        except SyntaxError as exc:
            raise ExtractionError(f"{file.path}: cannot parse: {exc}") from None
        for line, kind in prose.items():
            if kinds[offset + line - 1] != BLANK:
                kinds[offset + line - 1] = kind
        file_lines = lines[offset : offset + file.line_count]
        for name, start, open_line, end in found:
            signature = "\n".join(file_lines[start - 1 : open_line])
            functions.append(
                FunctionDef(
                    name=name,
                    file=file.path,
                    signature=signature,
                    signature_line=offset + start,
                    body_start=offset + open_line + 1,
                    body_end=offset + end,
                    language=file.language,
                )
            )
    functions.sort(key=lambda f: f.body_start)
    return ParsedCorpus(tuple(functions), tuple(kinds))


def _parse(language: str, source: str) -> tuple[list[tuple[str, int, int, int]], dict[int, str]]:
    """(definitions as (name, first signature line, last signature line, last body line),
    prose line kinds) of one file, 1-based lines of that file."""
    parser = LANGUAGES[language].parser
    if parser == "ast":
        return _parse_python(source)
    if parser == "esprima":
        return _parse_javascript(source)
    from needle_lib.recall.treesitter import parse_tree_sitter  # loads grammars on first use

    return parse_tree_sitter(language, source)


# --- Python -----------------------------------------------------------------------------


def _parse_python(source: str) -> tuple[list[tuple[str, int, int, int]], dict[int, str]]:
    tree = ast.parse(source)
    colons, comment_lines = _scan_tokens(source)
    found: list[tuple[str, int, int, int]] = []
    prose: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # The header ends at the first depth-0 colon after `def`: robust to
            # multi-line parameter lists and return annotations.
            index = bisect.bisect_right(colons, (node.lineno, node.col_offset))
            header_end = colons[index][0]
            found.append((node.name, node.lineno, header_end, node.end_lineno or header_end))
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                prose[line] = DOCSTRING
    prose.update(dict.fromkeys(comment_lines, COMMENT))
    return found, prose


def _scan_tokens(source: str) -> tuple[list[tuple[int, int]], list[int]]:
    """One tokenize pass (it costs as much as the parse itself): the positions of colons
    outside brackets, and the lines holding nothing but a comment."""
    depth = 0
    colons: list[tuple[int, int]] = []
    comment_lines: list[int] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            if not token.line[: token.start[1]].strip():
                comment_lines.append(token.start[0])
        elif token.type != tokenize.OP:
            continue
        elif token.string in "([{":
            depth += 1
        elif token.string in ")]}":
            depth -= 1
        elif token.string == ":" and depth == 0:
            colons.append(token.start)
    return colons, comment_lines


# --- JavaScript -------------------------------------------------------------------------

_FUNCTION_TYPES = ("FunctionExpression", "ArrowFunctionExpression")


def _parse_javascript(source: str) -> tuple[list[tuple[str, int, int, int]], dict[int, str]]:
    # Imported here: esprima builds Unicode tables at import (~1 s), which every pytest
    # collection would pay even when the parse comes from the cache.
    import esprima

    options = {"loc": True, "range": True, "comment": True}
    try:
        tree = esprima.parseScript(source, options)
    except esprima.Error as exc:
        try:  # an ES module (import / export, so every .mjs file) is not a script
            tree = esprima.parseModule(source, options)
        except esprima.Error:
            raise SyntaxError(str(exc)) from None
    found: list[tuple[str, int, int, int]] = []
    named_bodies: set[int] = set()

    def record(name: str | None, definition: Any, function: Any) -> None:
        body = function.body
        if name is None or body is None or body.type != "BlockStatement":
            return  # expression-bodied arrows have no lines between braces
        named_bodies.add(id(function))
        found.append((name, definition.loc.start.line, body.loc.start.line, body.loc.end.line - 1))

    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        kind = getattr(node, "type", None)
        if kind == "FunctionDeclaration" and node.id is not None:
            record(node.id.name, node, node)
        elif kind == "VariableDeclarator" and _is_function(node.init):
            record(_pattern_name(node.id), node, node.init)
        elif kind == "AssignmentExpression" and _is_function(node.right):
            record(_member_name(node.left), node, node.right)
        elif kind in ("Property", "MethodDefinition") and _is_function(node.value):
            record(_key_name(node), node, node.value)
        elif kind == "FunctionExpression" and node.id is not None and id(node) not in named_bodies:
            record(node.id.name, node, node)
        stack.extend(_children(node))
    return found, _comment_lines(source, tree.comments or [])


def _is_function(node: Any) -> bool:
    return getattr(node, "type", None) in _FUNCTION_TYPES


def _pattern_name(node: Any) -> str | None:
    return node.name if getattr(node, "type", None) == "Identifier" else None


def _member_name(node: Any) -> str | None:
    if node.type == "Identifier":
        return node.name
    if node.type == "MemberExpression":
        prop = node.property
        if not node.computed and prop.type == "Identifier":
            return prop.name
        if prop.type == "Literal" and isinstance(prop.value, str):
            return prop.value
    return None


def _key_name(node: Any) -> str | None:
    key = node.key
    if key.type == "Identifier" and not node.computed:
        return key.name
    if key.type == "Literal" and isinstance(key.value, str | int | float):
        return str(key.value)
    return None


def _children(node: Any) -> list[Any]:
    children: list[Any] = []
    for key, value in vars(node).items():
        if key in ("loc", "range", "comments"):
            continue
        if isinstance(value, list):
            children.extend(v for v in reversed(value) if hasattr(v, "type"))
        elif hasattr(value, "type"):
            children.append(value)
    return children


def _comment_lines(source: str, comments: list[Any]) -> dict[int, str]:
    """Lines whose only non-blank content is comment text: a docstring where a ``/** */``
    doc comment covers part of the line (as in every other brace language), else a comment."""
    starts = [0]
    for text_line in split_lines(source):
        starts.append(starts[-1] + len(text_line) + 1)
    covered: dict[int, list[tuple[int, int, bool]]] = {}
    for comment in comments:
        begin, end = comment.range
        doc = comment.type == "Block" and comment.value.startswith("*") and comment.value != "*"
        for line in range(comment.loc.start.line, comment.loc.end.line + 1):
            covered.setdefault(line, []).append((begin, end, doc))
    prose: dict[int, str] = {}
    for number, spans in covered.items():
        line_start, line_end = starts[number - 1], starts[number] - 1
        outside = [True] * (line_end - line_start)
        for begin, end, _ in spans:
            for pos in range(max(begin, line_start), min(end, line_end)):
                outside[pos - line_start] = False
        text = source[line_start:line_end]
        if not "".join(ch for ch, out in zip(text, outside, strict=True) if out).strip():
            prose[number] = DOCSTRING if any(doc for _, _, doc in spans) else COMMENT
    return prose
