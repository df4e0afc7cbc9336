"""The extractor against the real fixtures and every supported definition form."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from recall_helpers import body, by_name, parse_source, real_corpus

from needle_lib.paths import FIXTURES_DIR, REPO_ROOT
from needle_lib.recall.corpus import (
    build_corpus,
    configured_corpus_names,
    load_corpus,
    resolve_corpus,
    split_lines,
)
from needle_lib.recall.extract import (
    BLANK,
    CODE,
    COMMENT,
    DOCSTRING,
    ExtractionError,
    parse_corpus,
)
from needle_lib.recall.targets import find_targets
from needle_lib.testing.ctags import (
    CTAGS_KINDS,
    CtagsFunction,
    CtagsMissingError,
    compare,
    ctags_functions,
    plain_name,
    same_place,
)

REAL = ["jquery", "http_server"]
FIXTURE_FILE = {"jquery": "jquery.js", "http_server": "http_server.py"}
EXCLUSION = re.compile(
    r"excluded (?P<n>\d+) unanswerable target\(s\) — "
    r"duplicate name AND identical signature: (?P<names>.+)"
)


def file_lines(name: str) -> list[str]:
    """The fixture's own lines, read independently of the corpus loader."""
    return (FIXTURES_DIR / FIXTURE_FILE[name]).read_bytes().decode("utf-8").split("\n")


# --- real fixtures ----------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL)
def test_every_window_is_the_files_own_lines(name: str) -> None:
    loaded, own = real_corpus(name), file_lines(name)
    assert loaded.targets.eligible
    for target in loaded.targets.eligible:
        start = target.start_line - 1
        window = target.window(loaded.lines)
        assert len(window) == 20
        assert window == own[start : start + 20], target.case_id


@pytest.mark.parametrize("name", configured_corpus_names())
def test_every_body_and_signature_is_verbatim(name: str) -> None:
    """Every shipped corpus: each extracted line equals its source file's own line, read
    from disk apart from the corpus loader (multi-file corpora included)."""
    loaded = real_corpus(name)
    assert loaded.parsed.functions
    files = {f.path: f for f in loaded.corpus.files}
    own = {path: (REPO_ROOT / path).read_bytes().decode("utf-8").split("\n") for path in files}
    for function in loaded.parsed.functions:
        file = files[function.file]
        assert file.language == function.language
        lines, shift = own[function.file], file.first_line
        start, end = function.body_start - shift, function.body_end - shift + 1
        assert body(loaded.corpus, function) == lines[start:end], function.name
        signature = lines[function.signature_line - shift : start]
        assert function.signature == "\n".join(signature), function.name
        assert function.signature.strip(), function.name


CTAGS_CORPORA = [
    n for n in configured_corpus_names() if load_corpus(resolve_corpus(n)).language in CTAGS_KINDS
]


def _ctags(path: Path, language: str) -> list[CtagsFunction]:
    try:
        return ctags_functions(path, language)
    except CtagsMissingError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("name", CTAGS_CORPORA)
def test_definition_counts_agree_with_ctags(name: str) -> None:
    """An independent parser finds the same multi-line functions; the only ones it may miss
    are those nested in another function's body (Go closures, Rust inner fns), which ctags
    does not report."""
    loaded = real_corpus(name)
    (file,) = loaded.corpus.files
    theirs = Counter(f.name for f in _ctags(REPO_ROOT / file.path, file.language))
    functions = [f for f in loaded.parsed.functions if f.body_end >= f.signature_line]
    ours = Counter(plain_name(f.name) for f in functions)
    assert not theirs - ours, "ctags finds functions the extractor misses"
    for extra in (ours - theirs).elements():
        assert any(
            outer.body_start <= inner.signature_line <= outer.body_end
            for inner in functions
            if plain_name(inner.name) == extra
            for outer in functions
            if outer is not inner
        ), f"{extra}: found only by the extractor and not nested in another function"


#: Macro-heavy real files (issue 37), from Debian packages: installed, or taken out of them
#: by `.ci/run` into `.debian/` (its `debian_files` lists the same paths).
#: (package, path glob under the root, language: ctags is told it too)
MACRO_HEAVY = [
    ("nlohmann-json3-dev", "usr/include/nlohmann/json.hpp", "cpp"),
    ("libboost1.74-dev", "usr/include/boost/coroutine/asymmetric_coroutine.hpp", "cpp"),
    ("libboost1.74-dev", "usr/include/boost/atomic/detail/core_arch_ops_gcc_aarch64.hpp", "cpp"),
    ("qtbase5-dev", "usr/include/*/qt5/QtCore/qlist.h", "cpp"),
    ("v4l2loopback-dkms", "usr/src/v4l2loopback-*/v4l2loopback.c", "c"),
]
DEBIAN_ROOTS = (Path("/"), REPO_ROOT / ".debian")


def debian_file(package: str, pattern: str) -> Path:
    """The file of a Debian package, installed or unpacked, or a skip saying how to get it."""
    for root in DEBIAN_ROOTS:
        found = sorted(root.glob(pattern))
        if found:
            return found[-1]
    pytest.skip(
        f"{pattern} is not here: apt-get install {package}, or run .ci/run, which unpacks "
        f"it into .debian/"
    )


@pytest.mark.parametrize(
    ("package", "pattern", "language"), MACRO_HEAVY, ids=[Path(p).name for _, p, _ in MACRO_HEAVY]
)
def test_macro_heavy_files_agree_with_ctags(package: str, pattern: str, language: str) -> None:
    """At least 90 % of ctags' functions with 20-line bodies are found by name, and every
    extracted function at a place ctags names closes where ctags says (no wrong body)."""
    path = debian_file(package, pattern)
    try:
        agreement = compare(path, language, 20)
    except CtagsMissingError as exc:
        pytest.skip(str(exc))
    assert len(agreement.reference) >= 8, "ctags finds the file's long functions"
    assert agreement.recall_by_name >= 0.9, [f.name for f in agreement.missed]
    assert not agreement.wrong, [(f.name, f.body_end, t.end) for f, t in agreement.wrong]
    lines = path.read_bytes().decode("utf-8").split("\n")
    for function in agreement.extracted:  # verbatim, read apart from the corpus loader
        signature = lines[function.signature_line - 1 : function.body_start - 1]
        assert function.signature == "\n".join(signature), function.name


def test_rust_vec_long_functions_are_all_found() -> None:
    """`alloc/vec/mod.rs` (issue 37's "83 %"): every function ctags finds with a body is
    extracted at the same place, and every one with 20 body lines is a target but `drop`,
    the guard in `dedup_by` whose name and signature `fn drop(&mut self) {` are also those
    of `impl Drop for Vec`: no prompt can tell the two apart, so it is excluded."""
    path = debian_file("rust-src", "usr/src/rustc-*/library/alloc/src/vec/mod.rs")
    corpus = build_corpus("vec", [("mod.rs", path.read_bytes().decode("utf-8"))])
    parsed = parse_corpus(corpus)
    lines = corpus.lines
    for function in _ctags(path, "rust"):
        if lines[function.line - 1].rstrip().endswith(";"):
            continue  # a trait method without a body
        assert any(same_place(f, function) for f in parsed.functions), function
    targets = find_targets(parsed, 20)
    long_names = Counter(f.name for f in parsed.functions if f.body_length >= 20)
    assert Counter(t.name for t in targets.eligible) == long_names - Counter(["drop"])
    assert {f.name for f in targets.excluded} == {"drop"}


def _typescript_module() -> Path:
    """The TypeScript compiler's package directory (npm's global one), or a skip saying why."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: TypeScript counts are not checked")
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True).stdout.strip()
    module = Path(root) / "typescript"
    if not (module / "lib" / "typescript.js").is_file():
        pytest.skip(
            "the TypeScript compiler's JavaScript API is not installed "
            "(npm install -g typescript@5)"
        )
    return module


TYPESCRIPT_CORPORA = [
    n for n in configured_corpus_names() if load_corpus(resolve_corpus(n)).language == "typescript"
]


@pytest.mark.parametrize("name", TYPESCRIPT_CORPORA)
def test_typescript_definitions_agree_with_the_typescript_compiler(name: str) -> None:
    """The TypeScript compiler (an independent parser; ctags' TypeScript parser misses most
    class methods) finds the same multi-line function bodies, file by file, closing on the
    same lines: functions, methods, constructors, accessors and function literals bound to
    a name; both skip one-line bodies, arrow functions without a block and computed names."""
    module = _typescript_module()
    loaded = real_corpus(name)
    files = {f.path: f for f in loaded.corpus.files}
    script = Path(__file__).with_name("typescript_functions.js")
    out = subprocess.run(
        ["node", str(script), str(module), *(str(REPO_ROOT / path) for path in files)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for row, (path, file) in zip(out.splitlines(), files.items(), strict=True):
        theirs_json = json.loads(row)
        assert theirs_json["parse_errors"] == 0, path
        theirs = Counter(
            (fn, close) for fn, opens, close in theirs_json["functions"] if close > opens
        )
        shift = file.first_line - 1
        ours = Counter(
            (f.name, f.body_end + 1 - shift)
            for f in loaded.parsed.functions
            if f.file == path and f.body_end >= f.signature_line
        )
        assert theirs, path
        assert not theirs - ours, f"{path}: the compiler finds functions the extractor misses"
        assert not ours - theirs, f"{path}: the extractor finds functions the compiler does not"


def test_javascript_bodies_lie_between_the_braces() -> None:
    jquery = real_corpus("jquery")
    for function in jquery.parsed.functions:
        assert "{" in jquery.lines[function.body_start - 2], function.name
        if function.body_length:
            closing = jquery.lines[function.body_end]  # the line after the body
            assert closing.lstrip().startswith("}"), (function.name, function.body_end)


def test_python_bodies_match_an_independent_ast_walk() -> None:
    server = real_corpus("http_server")
    tree = ast.parse(server.corpus.text)
    expected = sorted(
        (node.name, node.lineno, node.end_lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    )
    got = sorted((f.name, f.signature_line, f.body_end) for f in server.parsed.functions)
    assert got == expected
    for function in server.parsed.functions:
        assert function.signature.rstrip().endswith(":"), function.name


def test_jquery_unanswerable_targets_are_excluded() -> None:
    jquery = real_corpus("jquery")
    excluded = {f.name for f in jquery.targets.excluded}
    eligible = {t.name for t in jquery.targets.eligible}
    assert {"get", "setup", "sortOrder"} <= excluded
    assert not {"val", "init", "then", "PSEUDO", "parseHTML"} - eligible
    excluded_anchors = {f.anchor for f in jquery.targets.excluded}
    assert not excluded_anchors & {t.function.anchor for t in jquery.targets.eligible}


def test_every_excluded_target_has_a_true_twin() -> None:
    jquery = real_corpus("jquery")
    for function in jquery.targets.excluded:
        twins = [
            other
            for other in jquery.parsed.functions
            if other != function
            and other.name == function.name
            and other.signature.strip() == function.signature.strip()
        ]
        assert twins, function


def test_val_is_anchored_on_its_property_line() -> None:
    (val,) = [t for t in real_corpus("jquery").targets.eligible if t.name == "val"]
    assert val.function.signature == "\tval: function( value ) {"
    assert real_corpus("jquery").lines[val.start_line - 2] == "\tval: function( value ) {"


def test_exclusion_message_format() -> None:
    target_set = real_corpus("jquery").targets
    message = target_set.exclusion_message()
    assert message is not None
    match = EXCLUSION.fullmatch(message)
    assert match, message
    assert int(match["n"]) == len(target_set.excluded)
    listed = [name.partition(" ×") for name in match["names"].split(", ")]
    assert [name for name, _, _ in listed] == sorted({f.name for f in target_set.excluded})
    assert sum(int(n or 1) for _, _, n in listed) == len(target_set.excluded)
    assert real_corpus("http_server").targets.exclusion_message() is not None


def test_a_corpus_without_twins_has_no_exclusion_message(tmp_path: Path) -> None:
    _, parsed = parse_source(tmp_path, "a.py", "def f():\n    return 1\n")
    assert find_targets(parsed, 1).exclusion_message() is None


# --- JavaScript forms -------------------------------------------------------------------

JS = """\
// leading comment
function declared( a ) {
\tvar x = a; // trailing comment keeps the line code

\treturn x;
}
var assigned = function( b ) {
\t/* a block comment
\t   over two lines */
\treturn b;
};
const arrow = ( c ) => {
\treturn c * 2;
};
const expression = ( d ) => d + 1;
a.b.c = function( e ) {
\treturn e;
};
var obj = {
\tval: function( value ) {
\t\treturn value;
\t},
\tfoo( x ) {
\t\treturn x;
\t}
};
class Widget {
\tconstructor( y ) {
\t\tthis.y = y;
\t}
\trender() {
\t\treturn this.y;
\t}
}
"""


@pytest.fixture(scope="module")
def js(tmp_path_factory: pytest.TempPathFactory):
    return parse_source(tmp_path_factory.mktemp("js"), "forms.js", JS)


@pytest.mark.parametrize(
    ("name", "signature", "body_lines"),
    [
        (
            "declared",
            "function declared( a ) {",
            ["\tvar x = a; // trailing comment keeps the line code", "", "\treturn x;"],
        ),
        (
            "assigned",
            "var assigned = function( b ) {",
            ["\t/* a block comment", "\t   over two lines */", "\treturn b;"],
        ),
        ("arrow", "const arrow = ( c ) => {", ["\treturn c * 2;"]),
        ("c", "a.b.c = function( e ) {", ["\treturn e;"]),
        ("val", "\tval: function( value ) {", ["\t\treturn value;"]),
        ("foo", "\tfoo( x ) {", ["\t\treturn x;"]),
        ("constructor", "\tconstructor( y ) {", ["\t\tthis.y = y;"]),
        ("render", "\trender() {", ["\t\treturn this.y;"]),
    ],
)
def test_javascript_definition_forms(js, name: str, signature: str, body_lines: list[str]):
    corpus, parsed = js
    function = by_name(parsed)[name]
    assert function.signature == signature
    assert body(corpus, function) == body_lines
    assert function.language == "javascript"
    assert function.file == corpus.files[0].path


def test_expression_bodied_arrows_are_not_targets(js) -> None:
    _, parsed = js
    assert "expression" not in by_name(parsed)


def test_javascript_line_kinds(js) -> None:
    corpus, parsed = js
    kinds = dict(zip(corpus.lines, parsed.kinds, strict=True))
    assert kinds["// leading comment"] == COMMENT
    assert kinds["\t/* a block comment"] == COMMENT
    assert kinds["\t   over two lines */"] == COMMENT
    assert kinds["\tvar x = a; // trailing comment keeps the line code"] == CODE
    assert kinds[""] == BLANK
    assert kinds["class Widget {"] == CODE
    assert set(parsed.kinds) == {CODE, BLANK, COMMENT}


def test_jquery_line_kinds() -> None:
    jquery = real_corpus("jquery")
    for line, kind in zip(jquery.lines, jquery.parsed.kinds, strict=True):
        if not line.strip():
            assert kind == BLANK
        elif line.lstrip().startswith("//"):
            assert kind == COMMENT, line
    val = next(t for t in jquery.targets.eligible if t.name == "val")
    kinds = val.window_kinds(jquery.parsed.kinds)
    assert kinds[0] == CODE
    doc_openers = [n for n, line in enumerate(jquery.lines) if line.strip() == "/**"]
    assert doc_openers  # JSDoc blocks are docstrings, as /** */ is in every brace language
    assert all(jquery.parsed.kinds[n] == DOCSTRING for n in doc_openers)
    assert jquery.parsed.kinds[0] == COMMENT  # the /*! license banner is a plain comment


def test_es_modules_parse(tmp_path: Path) -> None:
    source = (
        'import helper from "./helper.js";\n'
        "export function exported( a ) {\n\treturn helper( a );\n}\n"
        "export const arrowed = ( b ) => {\n\treturn b;\n};\n"
    )
    corpus, parsed = parse_source(tmp_path, "module.mjs", source)
    functions = by_name(parsed)
    assert functions["exported"].signature == "export function exported( a ) {"
    assert body(corpus, functions["exported"]) == ["\treturn helper( a );"]
    assert functions["arrowed"].signature == "export const arrowed = ( b ) => {"


@pytest.mark.parametrize(
    ("filename", "source"),
    [("broken.js", "function broken( {\n"), ("broken.py", "def broken(:\n    pass\n")],
)
def test_unparseable_sources_name_the_file(tmp_path: Path, filename: str, source: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        parse_source(tmp_path, filename, source)
    assert str(caught.value).startswith(f"{tmp_path / filename}: cannot parse")


# --- Python forms -----------------------------------------------------------------------

PY = '''\
# module comment
import functools


def plain(a):
    """One-line docstring."""
    return a


class Server:
    def method(self, b):
        """A docstring
        over two lines.
        """

        # a comment inside
        return b  # trailing comment keeps the line code

    @functools.cache
    def decorated(self):
        return 1

    async def fetch(self, url):
        await url


def long_header(
    first: int,
    second: dict[str, int] | None = None,
) -> int:
    return first
'''


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory):
    return parse_source(tmp_path_factory.mktemp("py"), "forms.py", PY)


@pytest.mark.parametrize(
    ("name", "signature", "body_lines"),
    [
        ("plain", "def plain(a):", ['    """One-line docstring."""', "    return a"]),
        (
            "method",
            "    def method(self, b):",
            [
                '        """A docstring',
                "        over two lines.",
                '        """',
                "",
                "        # a comment inside",
                "        return b  # trailing comment keeps the line code",
            ],
        ),
        ("decorated", "    def decorated(self):", ["        return 1"]),
        ("fetch", "    async def fetch(self, url):", ["        await url"]),
        (
            "long_header",
            "def long_header(\n    first: int,\n"
            "    second: dict[str, int] | None = None,\n) -> int:",
            ["    return first"],
        ),
    ],
)
def test_python_definition_forms(py, name: str, signature: str, body_lines: list[str]):
    corpus, parsed = py
    function = by_name(parsed)[name]
    assert function.signature == signature
    assert body(corpus, function) == body_lines
    assert function.language == "python"


def test_python_line_kinds(py) -> None:
    corpus, parsed = py
    kinds = dict(zip(corpus.lines, parsed.kinds, strict=True))
    assert kinds["# module comment"] == COMMENT
    assert kinds['    """One-line docstring."""'] == DOCSTRING
    assert kinds['        """A docstring'] == DOCSTRING
    assert kinds["        over two lines."] == DOCSTRING
    assert kinds["        # a comment inside"] == COMMENT
    assert kinds["        return b  # trailing comment keeps the line code"] == CODE
    assert kinds["    @functools.cache"] == CODE
    assert kinds[""] == BLANK


def test_http_server_docstrings_and_comments_are_prose() -> None:
    server = real_corpus("http_server")
    kind_of = dict(enumerate(server.parsed.kinds, start=1))
    docstrings = 0
    for node in ast.walk(ast.parse(server.corpus.text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and ast.get_docstring(
            node, clean=False
        ):
            first = node.body[0]
            for number in range(first.lineno, (first.end_lineno or first.lineno) + 1):
                assert kind_of[number] in (DOCSTRING, BLANK), number
            docstrings += 1
    assert docstrings > 10
    for number, line in enumerate(server.lines, start=1):
        if line.lstrip().startswith("#"):
            assert kind_of[number] == COMMENT, number
    assigned = server.lines.index('DEFAULT_ERROR_MESSAGE = """\\') + 1
    assert kind_of[assigned] == kind_of[assigned + 1] == CODE  # a string value, not a docstring


def test_split_lines_counts_only_newlines() -> None:
    assert split_lines("a\fb\nc\r\n\n") == ["a\fb", "c\r", ""]
    assert split_lines("") == []
