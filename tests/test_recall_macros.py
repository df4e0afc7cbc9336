"""The C and C++ macro lines blanked before parsing (needle_lib/recall/macros.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.recall.macros import blank_macro_lines

BLANKED = [  # (line, the macro text that becomes spaces)
    ("    JSON_HEDLEY_WARN_UNUSED_RESULT", "JSON_HEDLEY_WARN_UNUSED_RESULT"),
    ("NLOHMANN_JSON_NAMESPACE_BEGIN", "NLOHMANN_JSON_NAMESPACE_BEGIN"),
    ("    Q_OBJECT", "Q_OBJECT"),
    ("    JSON_HEDLEY_NON_NULL(3)", "JSON_HEDLEY_NON_NULL(3)"),
    (
        "    JSON_HEDLEY_DEPRECATED_FOR(3.1.0, items()) // NOLINT(readability)",
        "JSON_HEDLEY_DEPRECATED_FOR(3.1.0, items())",
    ),
    ('    QT_DEPRECATED_X("use f() instead")', 'QT_DEPRECATED_X("use f() instead")'),
    ("            JSON_INTERNAL_CATCH (out_of_range&)", "JSON_INTERNAL_CATCH (out_of_range&)"),
    ("    QT_TRY {", "QT_TRY"),
    ("    } QT_CATCH(...) {", "QT_CATCH(...)"),
    ("    bool f(int x) const BOOST_NOEXCEPT", "BOOST_NOEXCEPT"),
    ("    void g() Q_DECL_OVERRIDE {", "Q_DECL_OVERRIDE"),
    ("inline V f(const V& x) BOOST_MATH_NOEXCEPT(V)", "BOOST_MATH_NOEXCEPT(V)"),
    ("class Q_CORE_EXPORT QObject", "Q_CORE_EXPORT"),
    ("struct LLVM_LIBRARY_VISIBILITY Pass : public Base {", "LLVM_LIBRARY_VISIBILITY"),
]

KEPT = [
    '    JSON_THROW(type_error::create(302, "bad"));',  # a statement
    "    FOO_BAR(a,",  # a call whose arguments go on
    "    FOO_BAR,",  # an enumerator
    "    MAX_SIZE * 2",  # an expression
    "MY_TYPE make_widget(void)",  # an upper-case type before the declarator
    "static BOOST_FORCEINLINE void store(int v)",  # read as the type (grammars._c_function)
    "    JSON_TRY_CATCH_MODE = 1;",
    "    Widget",  # no underscore: a type on its own line, as GNU style writes it
    "Q_SIGNALS:",  # an access label
    '    BROKEN_MACRO("unterminated)',
]


@pytest.mark.parametrize(("line", "macro"), BLANKED)
def test_macro_lines_are_blanked(line: str, macro: str) -> None:
    blanked = blank_macro_lines(line.encode()).decode()
    assert blanked == line.replace(macro, " " * len(macro))


@pytest.mark.parametrize("line", KEPT)
def test_other_lines_are_kept(line: str) -> None:
    assert blank_macro_lines(line.encode()) == line.encode()


def test_preprocessor_lines_are_kept() -> None:
    source = (
        b"#define INDIRECT(macro) BOOST_PP_CAT(OPERATOR_, macro)\n"
        b"#define WRAP(x) \\\n"
        b"    JSON_TRY \\\n"
        b"    JSON_CATCH(x)\n"
        b"    JSON_TRY\n"
    )
    assert blank_macro_lines(source) == source.replace(b"    JSON_TRY\n", b" " * 12 + b"\n")


def test_only_the_macro_lines_of_a_file_change() -> None:
    source = b"int f()\n{\n    JSON_TRY\n    {\n        g();\n    }\n}\n"
    assert blank_macro_lines(source) == source.replace(b"JSON_TRY", b" " * 8)


@given(st.text(alphabet="AB_ (){}\n/;:,#\\cnstlu\"'x", max_size=80))
def test_rows_and_offsets_never_move(text: str) -> None:
    """Definitions are cut from the file's own lines by row: blanking may only turn
    characters into spaces."""
    source = text.encode()
    blanked = blank_macro_lines(source)
    assert len(blanked) == len(source)
    for before, after in zip(source, blanked, strict=True):
        assert after == before or after == ord(" ")
    assert blanked.count(b"\n") == source.count(b"\n")
