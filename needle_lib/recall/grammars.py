"""Which tree-sitter nodes are named function definitions, language by language.

A rule looks at one node and returns a ``Definition`` or None. The forms each language takes
(and skips) are listed in docs/languages.md; in short, every named form a reader would call a
function is taken — free functions, methods, constructors and destructors, closures and
lambdas bound to a name, default bodies in traits and interfaces, nested and
anonymous-class methods, Go receivers, C++ out-of-line members (``Foo::bar``), Kotlin and
Swift extension functions — and declarations without a body (prototypes, abstract and
interface methods), expression-bodied one-liners and macro-generated code are skipped,
because they have no body lines to recall.

The signature runs from the definition's first token (annotations, attributes and
decorators aside: they are lines of their own that no reader calls part of the name) to the
line that opens the body, so an opening brace on its own line (Allman style) belongs to the
signature and the window starts at the first line inside the body, as it does for
JavaScript and Python.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from needle_lib.recall.macros import blank_macro_lines

if TYPE_CHECKING:  # the grammars load only when a file is parsed, never at collection
    from tree_sitter import Node


@dataclass(frozen=True)
class Definition:
    """A named definition: rows are 0-based tree-sitter rows of the file."""

    name: str
    start: Node  # the node whose first token starts the signature
    opens: int  # the row on which the signature ends (the body starts on the next row)
    closes: int  # the row of the closing token; the body ends on the row before


Rule = Callable[["Node"], "Definition | None"]


@dataclass(frozen=True)
class Grammar:
    """How one language's tree is read."""

    module: str  # the grammar wheel's module
    entry: str  # its function returning the language
    rules: Mapping[str, Rule]
    comments: frozenset[str]
    decorations: frozenset[str] = field(default_factory=frozenset)
    #: rewrites the source before it is parsed, keeping every row and byte offset (so
    #: definitions are still cut from the file's own lines): C and C++ macro lines
    prepare: Callable[[bytes], bytes] | None = None
    #: keep a definition despite unreadable text that pairs every brace
    #: (``treesitter._braces_paired``): macro-heavy C and C++
    tolerate_paired_errors: bool = False


# --- shared helpers ---------------------------------------------------------------------


def text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8")


def _named(node: Node, name_field: str = "name") -> str | None:
    name = text(node.child_by_field_name(name_field))
    return " ".join(name.split()) or None


def braced(name: str | None, start: Node, body: Node | None) -> Definition | None:
    """A body between braces: the signature ends on the opening brace's row."""
    if name is None or body is None:
        return None
    return Definition(name, start, body.start_point.row, body.end_point.row)


def _child(node: Node | None, *types: str) -> Node | None:
    if node is None:
        return None
    return next((c for c in node.children if c.type in types), None)


def bound_closure(
    name: str | None, start: Node, value: Node | None, arrows: tuple[str, ...]
) -> Definition | None:
    """A closure literal bound to a name whose parameters sit inside the braces (Kotlin
    ``{ x -> ...}``, Swift ``{ x in ...}``): the signature ends on the arrow's row."""
    if name is None or value is None:
        return None
    arrow = _child(value, *arrows)
    opens = (arrow or value).start_point.row
    return Definition(name, start, opens, value.end_point.row)


def _function_body(function: Node | None, body_types: tuple[str, ...]) -> Node | None:
    body = function.child_by_field_name("body") if function is not None else None
    return body if body is not None and body.type in body_types else None


def method(body_types: tuple[str, ...], prefix: str = "") -> Rule:
    """A definition with a ``name`` field and a braced ``body`` field of ``body_types``."""

    def rule(node: Node) -> Definition | None:
        name = _named(node)
        return braced(prefix + name if name else None, node, _function_body(node, body_types))

    return rule


# --- Go ---------------------------------------------------------------------------------


def _go_bound(names: Node | None, values: Node | None, start: Node) -> Definition | None:
    if names is None or values is None:
        return None
    if names.type == "expression_list":
        if names.named_child_count != 1:
            return None
        names = names.named_children[0]
    if values.type == "expression_list":
        if values.named_child_count != 1:
            return None
        values = values.named_children[0]
    if values.type != "func_literal":
        return None
    name = (
        text(names.child_by_field_name("field"))
        if names.type == "selector_expression"
        else (text(names) if names.type == "identifier" else None)
    )
    return braced(name or None, start, _function_body(values, ("block",)))


GO = Grammar(
    "tree_sitter_go",
    "language",
    {
        "function_declaration": method(("block",)),
        "method_declaration": method(("block",)),
        "var_spec": lambda n: _go_bound(
            n.child_by_field_name("name"), n.child_by_field_name("value"), n
        ),
        "short_var_declaration": lambda n: _go_bound(
            n.child_by_field_name("left"), n.child_by_field_name("right"), n
        ),
        "assignment_statement": lambda n: _go_bound(
            n.child_by_field_name("left"), n.child_by_field_name("right"), n
        ),
    },
    frozenset({"comment"}),
)


# --- Rust -------------------------------------------------------------------------------


def _rust_let(node: Node) -> Definition | None:
    pattern, value = node.child_by_field_name("pattern"), node.child_by_field_name("value")
    if pattern is None or pattern.type != "identifier" or value is None:
        return None
    if value.type != "closure_expression":
        return None
    return braced(text(pattern), node, _function_body(value, ("block",)))


RUST = Grammar(
    "tree_sitter_rust",
    "language",
    {"function_item": method(("block",)), "let_declaration": _rust_let},
    frozenset({"line_comment", "block_comment"}),
    frozenset({"attribute_item", "inner_attribute_item"}),
)


# --- Java -------------------------------------------------------------------------------


def _declarator_lambda(lambda_type: str, body_types: tuple[str, ...]) -> Rule:
    """``name = <lambda>`` where the lambda has a braced body (Java, C#)."""

    def rule(node: Node) -> Definition | None:
        value = node.child_by_field_name("value") or _child(node, lambda_type)
        if value is None:
            clause = _child(node, "equals_value_clause")
            value = _child(clause, lambda_type)
        if value is None or value.type != lambda_type:
            return None
        return braced(_named(node), node, _function_body(value, body_types))

    return rule


JAVA = Grammar(
    "tree_sitter_java",
    "language",
    {
        "method_declaration": method(("block",)),
        "constructor_declaration": method(("constructor_body",)),
        "compact_constructor_declaration": method(("block",)),
        "variable_declarator": _declarator_lambda("lambda_expression", ("block",)),
    },
    frozenset({"line_comment", "block_comment"}),
    frozenset({"annotation", "marker_annotation"}),
)


# --- C and C++ --------------------------------------------------------------------------

_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "template_function",
        "operator_cast",
        "type_identifier",
    }
)


#: A definition "named" like a statement keyword is the grammar misreading macro-heavy code.
_C_KEYWORDS = frozenset(
    {
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "return",
        "sizeof",
        "catch",
        "try",
        "noexcept",
        "decltype",
        "alignof",
        "static_assert",
    }
)
_C_WRAPPERS = frozenset({"parenthesized_declarator", "reference_declarator"})


def _declarator_name(node: Node | None) -> str | None:
    """Follow a declarator chain (pointers, references, parentheses, the function
    declarator) to the declared name: ``void (*f(int))(int)`` declares ``f``."""
    while node is not None:
        if node.type == "operator_cast":  # `operator bool() const`: the name is the type
            return "operator " + " ".join(text(node.child_by_field_name("type")).split())
        if node.type in _C_NAMES:
            if "operator" in node.type:
                return "".join(text(node).split())
            # `Foo<T>::\n    bar` (the name on a line of its own) is `Foo<T>::bar`
            return "::".join(" ".join(part.split()) for part in text(node).split("::"))
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type in _C_WRAPPERS:
            inner = next(iter(node.named_children), None)
        node = inner
    return None


def _c_function(node: Node) -> Definition | None:
    if node.parent is not None and node.parent.type == "compound_statement":
        return None  # no nested functions in C++: a macro such as `JSON_CATCH (...) {` in a body
    if text(node).split("\n", 1)[0].rstrip().endswith("\\"):
        return None  # the text of a multi-line macro, not a definition
    start = node
    while start.parent is not None and start.parent.type == "template_declaration":
        start = start.parent  # `template <typename T>` lines are part of the signature
    declarator = node.child_by_field_name("declarator")
    if declarator is None or _guessed_declarator(node, declarator):
        return None
    name = _declarator_name(declarator)
    if name in _C_KEYWORDS:
        return None
    return braced(name, start, _function_body(node, ("compound_statement",)))


def _guessed_declarator(node: Node, declarator: Node) -> bool:
    """A "declarator" that declares no parameter list: the grammar misread a macro, as in
    ``struct Q_CORE_EXPORT QListData {`` (a struct) or ``static MACRO void f(int x) MACRO2
    {``, where it takes ``MACRO2`` for the name. With a parameter list the name before it
    is the real one, even when unreadable text precedes it (``static int __init f(void)``,
    ``Q_OUTOFLINE_TEMPLATE QList<T> QList<T>::mid(…)``: the real type)."""
    current: Node | None = declarator
    while current is not None and current.type not in ("function_declarator", "operator_cast"):
        inner = current.child_by_field_name("declarator")
        if inner is None and current.type in _C_WRAPPERS:
            inner = next(iter(current.named_children), None)
        current = inner
    return current is None


def _cpp_lambda(node: Node) -> Definition | None:
    value = node.child_by_field_name("value")
    if value is None or value.type != "lambda_expression":
        return None
    name = _declarator_name(node.child_by_field_name("declarator"))
    return braced(name, node, _function_body(value, ("compound_statement",)))


C = Grammar(
    "tree_sitter_c",
    "language",
    {"function_definition": _c_function},
    frozenset({"comment"}),
    prepare=blank_macro_lines,
    tolerate_paired_errors=True,
)
CPP = Grammar(
    "tree_sitter_cpp",
    "language",
    {"function_definition": _c_function, "init_declarator": _cpp_lambda},
    frozenset({"comment"}),
    frozenset({"attribute_declaration"}),
    prepare=blank_macro_lines,
    tolerate_paired_errors=True,
)


# --- C# ---------------------------------------------------------------------------------


def _cs_operator(node: Node) -> Definition | None:
    symbol = node.child_by_field_name("operator") or node.child_by_field_name("type")
    name = f"operator {text(symbol)}" if symbol is not None else None
    return braced(name, node, _function_body(node, ("block",)))


CSHARP = Grammar(
    "tree_sitter_c_sharp",
    "language",
    {
        "method_declaration": method(("block",)),
        "constructor_declaration": method(("block",)),
        "destructor_declaration": method(("block",), prefix="~"),
        "local_function_statement": method(("block",)),
        "operator_declaration": _cs_operator,
        "conversion_operator_declaration": _cs_operator,
        "variable_declarator": _declarator_lambda("lambda_expression", ("block",)),
    },
    frozenset({"comment"}),
    frozenset({"attribute_list"}),
)


# --- Ruby -------------------------------------------------------------------------------


def _ruby_method(node: Node) -> Definition | None:
    if node.child_count == 0 or node.children[-1].type != "end":
        return None  # an endless `def f = expr` has no body lines
    name = _named(node)
    header = node.child_by_field_name("parameters") or node.child_by_field_name("name")
    if name is None or header is None:
        return None
    return Definition(name, node, header.end_point.row, node.end_point.row)


def _ruby_block(name: str | None, start: Node, block: Node | None) -> Definition | None:
    if name is None or block is None or block.type not in ("do_block", "block"):
        return None
    params = block.child_by_field_name("parameters")
    opens = params.end_point.row if params is not None else block.start_point.row
    return Definition(name, start, opens, block.end_point.row)


def _ruby_assignment(node: Node) -> Definition | None:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type not in ("identifier", "constant"):
        return None
    if right.type == "lambda":  # ->(x) do ... end
        body = right.child_by_field_name("body")
        definition = _ruby_block(text(left), node, body)
        params = right.child_by_field_name("parameters")
        if definition is not None and params is not None:
            opens = max(definition.opens, params.end_point.row)
            definition = Definition(definition.name, node, opens, definition.closes)
        return definition
    if right.type == "call" and text(right.child_by_field_name("method")) in ("lambda", "proc"):
        return _ruby_block(text(left), node, right.child_by_field_name("block"))
    return None


RUBY = Grammar(
    "tree_sitter_ruby",
    "language",
    {"method": _ruby_method, "singleton_method": _ruby_method, "assignment": _ruby_assignment},
    frozenset({"comment"}),
)


# --- PHP --------------------------------------------------------------------------------


def _php_closure(node: Node) -> Definition | None:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "variable_name":
        return None
    if right.type not in ("anonymous_function", "anonymous_function_creation_expression"):
        return None
    return braced(text(left), node, _function_body(right, ("compound_statement",)))


PHP = Grammar(
    "tree_sitter_php",
    "language_php",
    {
        "function_definition": method(("compound_statement",)),
        "method_declaration": method(("compound_statement",)),
        "assignment_expression": _php_closure,
    },
    frozenset({"comment"}),
    frozenset({"attribute_list"}),
)


# --- Kotlin -----------------------------------------------------------------------------


def _kotlin_function(node: Node) -> Definition | None:
    block = _child(_child(node, "function_body"), "block")
    return braced(_named(node), node, block)


def _kotlin_property(node: Node) -> Definition | None:
    name = text(_child(_child(node, "variable_declaration"), "identifier")) or None
    literal = _child(node, "lambda_literal")
    if literal is not None:
        return bound_closure(name, node, literal, ("->",))
    anonymous = _child(node, "anonymous_function")
    return braced(name, node, _child(_child(anonymous, "function_body"), "block"))


KOTLIN = Grammar(
    "tree_sitter_kotlin",
    "language",
    {
        "function_declaration": _kotlin_function,
        "secondary_constructor": lambda n: braced("constructor", n, _child(n, "block")),
        "property_declaration": _kotlin_property,
    },
    frozenset({"line_comment", "block_comment"}),
    frozenset({"annotation"}),
)


# --- Swift ------------------------------------------------------------------------------


def _swift_property(node: Node) -> Definition | None:
    value = node.child_by_field_name("value")
    if value is None or value.type != "lambda_literal":
        return None
    return bound_closure(_named(node), node, value, ("in",))


def _swift_keyword(keyword: str) -> Rule:
    return lambda n: braced(keyword, n, _function_body(n, ("function_body",)))


SWIFT = Grammar(
    "tree_sitter_swift",
    "language",
    {
        "function_declaration": method(("function_body",)),
        "init_declaration": _swift_keyword("init"),
        "deinit_declaration": _swift_keyword("deinit"),
        "property_declaration": _swift_property,
    },
    frozenset({"comment", "multiline_comment"}),
    frozenset({"attribute"}),
)


# --- TypeScript and TSX -----------------------------------------------------------------

_TS_FUNCTIONS = ("arrow_function", "function_expression", "function", "generator_function")


def _ts_bound(name: str | None, start: Node, value: Node | None) -> Definition | None:
    if value is None or value.type not in _TS_FUNCTIONS:
        return None
    return braced(name, start, _function_body(value, ("statement_block",)))


def _ts_member_name(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "member_expression":
        node = node.child_by_field_name("property")
    if node is None or node.type not in ("identifier", "property_identifier"):
        return None
    return text(node)


def _ts_key(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "string":
        return text(node)[1:-1] or None
    named = ("property_identifier", "private_property_identifier", "identifier", "number")
    return text(node) if node.type in named else None


TYPESCRIPT_RULES: dict[str, Rule] = {
    "function_declaration": method(("statement_block",)),
    "generator_function_declaration": method(("statement_block",)),
    "method_definition": lambda n: braced(
        _ts_key(n.child_by_field_name("name")), n, _function_body(n, ("statement_block",))
    ),
    "variable_declarator": lambda n: _ts_bound(
        _ts_member_name(n.child_by_field_name("name")), n, n.child_by_field_name("value")
    ),
    "assignment_expression": lambda n: _ts_bound(
        _ts_member_name(n.child_by_field_name("left")), n, n.child_by_field_name("right")
    ),
    "pair": lambda n: _ts_bound(
        _ts_key(n.child_by_field_name("key")), n, n.child_by_field_name("value")
    ),
    "public_field_definition": lambda n: _ts_bound(
        _ts_key(n.child_by_field_name("name")), n, n.child_by_field_name("value")
    ),
}
TYPESCRIPT = Grammar(
    "tree_sitter_typescript",
    "language_typescript",
    TYPESCRIPT_RULES,
    frozenset({"comment"}),
    frozenset({"decorator"}),
)
TSX = Grammar(
    "tree_sitter_typescript",
    "language_tsx",
    TYPESCRIPT_RULES,
    frozenset({"comment"}),
    frozenset({"decorator"}),
)


GRAMMARS: dict[str, Grammar] = {
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
    "csharp": CSHARP,
    "ruby": RUBY,
    "php": PHP,
    "kotlin": KOTLIN,
    "swift": SWIFT,
}
