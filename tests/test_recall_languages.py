"""Every definition form and the comment classification, pinned language by language.

Each file under tests/payloads/forms/ holds every form its language's extractor takes and
some it skips (declarations without a body, expression bodies, macro text), plus a line
comment, a block comment, a doc comment, a trailing comment on a code line, and a string
literal whose text looks like a comment.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_helpers import body, parse_source

from needle_lib.recall import treesitter
from needle_lib.recall.corpus import build_corpus
from needle_lib.recall.extract import BLANK, CODE, COMMENT, DOCSTRING, ExtractionError, parse_corpus
from needle_lib.recall.grammars import GRAMMARS, Grammar
from needle_lib.recall.languages import LANGUAGE_LIST, language_of

FORMS_DIR = Path(__file__).parent / "payloads" / "forms"

# file: {name: (signature, first body line, body lines)}
FORMS = {
    "forms.c": {
        "add": (
            "int add(int a, int b) {",
            "    return a + b; // trailing comment keeps the line code",
            1,
        ),
        "name_of": (
            "static const char *\nname_of(int code)\n{",
            '    return code ? "yes" : "no";',
            1,
        ),
        "handler_for": ("void (*handler_for(int signal))(int) {", "    return 0;", 1),
        "main": ("int main(void) {", '    const char *text = "\\', 3),
    },
    "forms.cpp": {
        "Widget": ("    Widget(int size) : size_(size) {", "        check();", 1),
        "~Widget": ("    ~Widget() {", "        size_ = 0;", 1),
        "size": ("    int size() const {", "        return size_;", 1),
        "operator==": (
            "    bool operator==(const Widget& other) const {",
            "        return size_ == other.size_;",
            1,
        ),
        "Widget::check": ("void Widget::check()\n{", "    if (size_ < 0) size_ = 0;", 1),
        "twice": ("template <typename T>\nT twice(T value) {", "    return value + value;", 1),
        "lambda": ("auto lambda = [](int x) {", "    return x * 2;", 1),
        "raw": ("std::string raw() {", '    return R"(', 3),
        # macro lines blanked before parsing (recall/macros.py); main read none of these
        "meta": ("    static Exported meta()\n    {", "        Exported result;", 10),
        "update": (
            "    Exported& update(const Exported& other)\n    {",
            "        m_value.object->operator[](other.key()) = other.value();",
            2,
        ),
        "inlined": (
            "    static WIDGET_INLINE int inlined(int x) WIDGET_NOEXCEPT\n    {",
            "        return x;",
            1,
        ),
    },
    "Forms.cs": {
        "Widget": (
            "        public Widget(int size)\n        {",
            "            this.size = size; // trailing comment keeps the line code",
            1,
        ),
        "~Widget": ("        ~Widget()\n        {", "            size = 0;", 1),
        "Area": (
            "        public int Area(\n            int width,\n            int height)\n        {",
            "            return width * height;",
            1,
        ),
        "operator +": (
            "        public static Widget operator +(Widget a, Widget b)\n        {",
            "            return new Widget(a.size + b.size);",
            1,
        ),
        "Locals": ("        public void Locals()\n        {", "            int Local(int x)", 11),
        "Local": (
            "            int Local(int x)\n            {",
            "                return x * 2;",
            1,
        ),
        "doubler": (
            "            Func<int, int> doubler = x =>\n            {",
            "                return x * 2;",
            1,
        ),
        "Describe": ("        string Describe()\n        {", '            return "shape";', 1),
    },
    "forms.go": {
        "Free": ("func Free(a int) int {", "\treturn a // trailing comment keeps the line code", 1),
        "Serve": (
            "func (s *Server) Serve(\n\tnetwork string,\n\taddress string,\n) error {",
            "\treturn nil",
            1,
        ),
        "Count": ("func (s Server) Count() int {", "\treturn s.n", 1),
        "assigned": ("var assigned = func(b int) int {", "\treturn b", 1),
        "Outer": ("func Outer() {", "\tnested := func(c int) int {", 8),
        "nested": ("\tnested := func(c int) int {", "\t\treturn c", 1),
        "Generic": ("func Generic[T any](v T) T {", "\treturn v", 1),
    },
    "Forms.java": {
        "Forms": (
            "    public Forms(int n) {",
            "        this.n = n; // trailing comment keeps the line code",
            1,
        ),
        "toString": ("    public String toString() {", '        return "Forms";', 1),
        "generic": (
            "    static <T> T generic(\n            T value,\n            int times)\n    {",
            "        return value;",
            1,
        ),
        "describe": ("        default String describe() {", '            return "shape";', 1),
        "anonymous": ("    Runnable anonymous() {", "        return new Runnable() {", 6),
        "run": ("            public void run() {", '                System.out.println("run");', 1),
        "doubler": (
            "    java.util.function.IntUnaryOperator doubler = (int x) -> {",
            "        return x * 2;",
            1,
        ),
        "locals": (
            "    void locals() {",
            "        java.util.function.IntUnaryOperator twice = x -> {",
            6,
        ),
        "twice": (
            "        java.util.function.IntUnaryOperator twice = x -> {",
            "            return x * 2;",
            1,
        ),
        "Point": (
            "        Point {",
            "            if (x < 0) throw new IllegalArgumentException();",
            1,
        ),
    },
    "forms.kt": {
        "constructor": (
            "    constructor(width: Int, height: Int) : this(width * height) {",
            "        check() // trailing comment keeps the line code",
            1,
        ),
        "area": (
            "    fun area(\n        scale: Int,\n    ): Int {",
            "        return size * scale",
            1,
        ),
        "check": ("    private fun check() {", "        require(size >= 0)", 1),
        "create": ("        fun create(): Widget {", "            return Widget(1)", 1),
        "shout": ("fun String.shout(): String {", '    return uppercase() + "!"', 1),
        "describe": ("    fun describe(): String {", '        return "shape"', 1),
        "doubler": ("val doubler = { x: Int ->", "    x * 2", 1),
        "outer": ("fun outer(): Int {", "    fun inner(x: Int): Int {", 7),
        "inner": ("    fun inner(x: Int): Int {", "        return x + 1", 1),
        "run": ("    override fun run() {", '        println("run")', 1),
    },
    "forms.php": {
        "free_function": (
            "function free_function($a)\n{",
            "    return $a; // trailing comment keeps the line code",
            1,
        ),
        "__construct": (
            "    public function __construct(private int $size)\n    {",
            "        $this->check();",
            1,
        ),
        "build": (
            "    public static function build(\n"
            "        int $size,\n        int $scale\n    ): self {",
            "        return new self($size * $scale);",
            1,
        ),
        "text": ("    public function text(): string\n    {", "        return <<<TEXT", 3),
        "greet": ("    public function greet(): string\n    {", '        return "hello";', 1),
        "$closure": ("$closure = function ($x) {", "    return $x * 2;", 1),
        "run": ("    public function run(): void\n    {", '        echo "run";', 1),
    },
    "forms.rb": {
        "initialize": (
            "    def initialize(size)",
            "      @size = size # trailing comment keeps the line code",
            1,
        ),
        "build": (
            "    def self.build(\n      size,\n      scale\n    )",
            "      new(size * scale)",
            1,
        ),
        "one_line": ("    def one_line; @size; end", None, 0),
        "registry": ("      def registry", "        @registry ||= {}", 1),
        "DOUBLER": ("    DOUBLER = lambda do |x|", "      x * 2", 1),
        "tripler": ("    tripler = ->(x) do", "      x * 3", 1),
        "text": ("    def text", "      <<~TEXT", 3),
    },
    "forms.rs": {
        "free": (
            "pub fn free(a: u32) -> u32 {",
            "    a // trailing comment keeps the line code",
            1,
        ),
        "new": ("    pub fn new() -> Self {", "        Counter { n: 0 }", 1),
        "add": (
            "    pub fn add<T>(\n        &mut self,\n        by: u32,\n    ) -> u32\n"
            "    where\n        T: Copy,\n    {",
            "        self.n += by;",
            2,
        ),
        "greeting": (
            "    fn greeting(&self) -> String {",
            '        format!("hello {}", self.name())',
            1,
        ),
        "outer": ("fn outer() -> u32 {", "    fn inner(x: u32) -> u32 {", 10),
        "inner": ("    fn inner(x: u32) -> u32 {", "        x * 2", 1),
        "closure": ("    let closure = |y: u32| {", "        y + 1", 1),
    },
    "forms.swift": {
        "init": (
            "    init(size: Int) {",
            "        self.size = size // trailing comment keeps the line code",
            1,
        ),
        "deinit": ("    deinit {", '        print("gone")', 1),
        "area": (
            "    func area(\n        scale: Int\n    ) -> Int {",
            "        return size * scale",
            1,
        ),
        "describe": ("    func describe() -> String {", '        return "widget"', 1),
        "summary": ("    func summary() -> String {", '        return "shape"', 1),
        "doubler": ("let doubler = { (x: Int) -> Int in", "    return x * 2", 1),
        "outer": ("func outer() -> Int {", "    func inner(_ x: Int) -> Int {", 7),
        "inner": ("    func inner(_ x: Int) -> Int {", "        return x + 1", 1),
    },
    "forms.ts": {
        "declared": (
            "export function declared(a: number): number {",
            "  return helper(a); // trailing comment keeps the line code",
            1,
        ),
        "overloaded": ("export function overloaded(a: any): any {", "  return a;", 1),
        "arrow": ("export const arrow = (b: number): number => {", "  return b * 2;", 1),
        "constructor": ("  constructor(private readonly size: number) {", "    this.check();", 1),
        "area": ("  area(\n    scale: number,\n  ): number {", "    return this.size * scale;", 1),
        "check": ("  private check(): void {", "    const text = `", 3),
        "onClick": ("  onClick(event: Event): void {", "    console.log(event);", 1),
        "onKey": ("  onKey: function (event: Event): void {", "    console.log(event);", 1),
        "generator": ("function* generator(): Generator<number> {", "  yield 1;", 1),
        "total": ("  get total(): number {", "    return 0;", 1),
        "#reset": ("  #reset(): void {", "    this.count = 0;", 1),
    },
    "forms.tsx": {
        "Greeting": (
            "export function Greeting(props: { name: string }) {",
            "  return <div>Hello {props.name}</div>;",
            1,
        ),
        "Button": (
            "export const Button = ({ label }: { label: string }) => {",
            '  const text = "// not a comment: a string";',
            2,
        ),
        "render": ("  render() {", "    return (", 6),
    },
}

SKIPPED = {  # forms each language documents as skipped, present in the payload
    "forms.c": {"declared", "SQUARE"},
    # the in-class prototype (its out-of-line body is Widget::check); a class behind an
    # export macro; the macros themselves
    "forms.cpp": {"check", "Exported", "WIDGET_EXPORT", "WIDGET_CATCH", "WIDGET_NOEXCEPT"},
    "Forms.cs": {"Size", "get", "Declared", "Expression", "Perimeter"},
    "forms.go": {"declared", "Area"},
    "Forms.java": {"declared", "area"},
    "forms.kt": {"expression", "perimeter", "listener"},
    "forms.php": {"declared", "area", "$arrow"},
    "forms.rb": {"area"},
    "forms.rs": {"name", "declared", "generated", "skipped"},
    "forms.swift": {"perimeter", "doubled"},
    "forms.ts": {"expression", "optional", "declaredOnly", "perimeter"},
    "forms.tsx": set(),
}

PROSE = {  # file: (comment lines, docstring lines); every other non-blank line is code
    "forms.c": ([1, 2, 7], [20]),
    "forms.cpp": ([1, 49], [6]),
    "Forms.cs": ([1, 71, 72], [6]),
    "forms.go": ([1, 4, 5, 7, 14], []),
    "Forms.java": ([9, 66, 67], [3, 4, 5]),
    "forms.kt": ([1, 63, 64], [4, 5, 6]),
    "forms.php": ([2, 3, 63, 64], [5, 6, 7]),
    "forms.rb": ([1, 41, 42, 43, 44], []),
    "forms.rs": ([8, 9], [1, 3, 11]),
    "forms.swift": ([1, 57, 58], [4]),
    "forms.ts": ([1, 64, 65], [4, 5, 6]),
    "forms.tsx": ([1], [4]),
}

FILES = sorted(FORMS, key=str.lower)


def parsed_payload(name: str):
    path = FORMS_DIR / name
    corpus = build_corpus("forms", [(name, path.read_text(encoding="utf-8"))])
    return corpus, parse_corpus(corpus)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("int add(int a, int b);\nstruct point { int x; };\n", "c"),
        ("/* a class of errors */\nextern int errno_of(void);\n", "c"),
        ("namespace forms {\nint add(int a, int b);\n}\n", "cpp"),
        ("template <typename T>\nT twice(T v);\n", "cpp"),
        ("class Q_CORE_EXPORT QObject\n{\n", "cpp"),
        ("struct Widget {\npublic:\n    int size() const;\n};\n", "cpp"),
    ],
)
def test_a_header_is_c_unless_its_text_is_cpp(text: str, language: str) -> None:
    assert language_of("include/x.h", text).name == language  # type: ignore[union-attr]
    assert language_of("include/x.h").name == "c"  # type: ignore[union-attr]
    assert language_of("src/x.c", text).name == "c"  # type: ignore[union-attr]


def test_a_cpp_header_is_read_with_the_cpp_grammar() -> None:
    text = "class Widget {\npublic:\n    int size() const {\n        return size_;\n    }\n};\n"
    corpus = build_corpus("widget", [("include/widget.h", text)])
    (size,) = parse_corpus(corpus).functions
    assert (corpus.files[0].language, size.name, size.language) == ("cpp", "size", "cpp")
    assert body(corpus, size) == ["        return size_;"]


def test_every_tree_sitter_language_has_a_payload() -> None:
    covered = {language_of(name).name for name in FORMS}  # type: ignore[union-attr]
    expected = {lang.name for lang in LANGUAGE_LIST if lang.parser == "tree-sitter"}
    assert covered == expected == set(GRAMMARS)


@pytest.mark.parametrize("name", FILES)
def test_every_named_form_is_taken_verbatim(name: str) -> None:
    corpus, parsed = parsed_payload(name)
    found = {f.name: f for f in parsed.functions}
    assert len(found) == len(parsed.functions), "a payload defines each name once"
    assert set(found) == set(FORMS[name])
    for function_name, (signature, first_line, length) in FORMS[name].items():
        function = found[function_name]
        assert function.signature == signature, function_name
        lines = body(corpus, function)
        assert (lines[0] if lines else None, len(lines)) == (first_line, length), function_name
        assert function.language == language_of(name).name  # type: ignore[union-attr]
        start = function.signature_line - 1
        assert "\n".join(corpus.lines[start : function.body_start - 1]) == signature


@pytest.mark.parametrize("name", FILES)
def test_skipped_forms_are_not_targets(name: str) -> None:
    _, parsed = parsed_payload(name)
    assert not SKIPPED[name] & {f.name for f in parsed.functions}
    text = (FORMS_DIR / name).read_text(encoding="utf-8")
    assert all(skipped.lstrip("$") in text for skipped in SKIPPED[name])


@pytest.mark.parametrize("name", FILES)
def test_comment_classification(name: str) -> None:
    corpus, parsed = parsed_payload(name)
    comments, docstrings = PROSE[name]
    for number, (line, kind) in enumerate(zip(corpus.lines, parsed.kinds, strict=True), 1):
        expected = (
            BLANK
            if not line.strip()
            else COMMENT
            if number in comments
            else DOCSTRING
            if number in docstrings
            else CODE
        )
        assert kind == expected, (number, line)
        if "not a comment" in line or "trailing comment" in line:
            assert kind == CODE, line


def test_allman_braces_belong_to_the_signature() -> None:
    allman = [
        (name, function_name, signature)
        for name, forms in FORMS.items()
        for function_name, (signature, _, _) in forms.items()
        if signature.split("\n")[-1].strip() == "{"
    ]
    assert {name for name, _, _ in allman} >= {"Forms.cs", "forms.php", "forms.c", "forms.rs"}
    for name, function_name, _ in allman:
        corpus, parsed = parsed_payload(name)
        function = next(f for f in parsed.functions if f.name == function_name)
        assert corpus.lines[function.body_start - 2].strip() == "{"
        assert corpus.lines[function.body_start - 1].strip() != "{"


def test_a_file_the_grammar_cannot_read_names_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError) as caught:
        parse_source(tmp_path, "broken.go", "package broken\n\nfunc broken( {\n")
    assert str(caught.value).startswith(f"{tmp_path / 'broken.go'}: cannot parse: line ")


def test_a_definition_around_unreadable_text_is_skipped(tmp_path: Path) -> None:
    source = (
        "package mixed\n\nfunc Good() int {\n\treturn 1\n}\n\nfunc Bad() int {\n\treturn ) 2\n}\n"
    )
    corpus, parsed = parse_source(tmp_path, "mixed.go", source)
    assert [f.name for f in parsed.functions] == ["Good"]
    assert body(corpus, parsed.functions[0]) == ["\treturn 1"]


def test_a_missing_grammar_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    go = GRAMMARS["go"]
    monkeypatch.setitem(
        GRAMMARS, "go", Grammar("tree_sitter_absent", "language", go.rules, go.comments)
    )
    treesitter.parser_for.cache_clear()
    try:
        with pytest.raises(treesitter.GrammarMissingError, match=r"install with "):
            treesitter.parser_for("go")
    finally:
        treesitter.parser_for.cache_clear()
