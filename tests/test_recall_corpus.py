"""Corpus configs and corpus text: multi-file concatenation, limits and config errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_helpers import tmp_config, write_sources

from needle_lib.recall.confined import SYMLINK, UNDER_SYMLINK
from needle_lib.recall.corpus import (
    CorpusConfig,
    ScoringPolicy,
    display_path,
    load_corpus,
    load_corpus_config,
    resolve_corpus,
)
from needle_lib.recall.extract import parse_corpus
from needle_lib.recall.targets import find_targets
from needle_lib.tomlconf import ConfigError

PY_FILES = {
    "b.py": """\
        def shared():
            y = "b"
            return y


        def only_b():
            z = 2
            return z
        """,
    "a.py": """\
        def shared():
            x = "a"
            return x
        """,
    "c.py": "def only_c():\n    x = 1\n    return x",  # no trailing newline
}


@pytest.fixture
def py_dir(tmp_path: Path) -> Path:
    return write_sources(tmp_path / "src", PY_FILES)


def test_files_are_concatenated_in_lexical_order_with_headers(py_dir: Path) -> None:
    corpus = load_corpus(tmp_config(py_dir, "*.py"))
    names = [Path(f.path).name for f in corpus.files]
    assert names == ["a.py", "b.py", "c.py"]
    assert corpus.multi_file and corpus.language == "python"
    for file in corpus.files:
        header = corpus.lines[file.first_line - 2]
        assert header == f"# ====== {file.path} ======"
        own = (py_dir / Path(file.path).name).read_text(encoding="utf-8").split("\n")
        if own[-1] == "":
            own.pop()
        assert file.line_count == len(own)
        assert corpus.lines[file.first_line - 1 : file.first_line - 1 + file.line_count] == own
    assert corpus.text.endswith("    return x\n")


def test_javascript_headers_use_line_comments(tmp_path: Path) -> None:
    write_sources(tmp_path, {"x.js": "function x() {\n}\n", "y.mjs": "function y() {\n}\n"})
    corpus = load_corpus(tmp_config(tmp_path, "*js"))
    assert corpus.language == "javascript"
    assert [line for line in corpus.lines if "======" in line] == [
        f"// ====== {f.path} ======" for f in corpus.files
    ]


def test_line_numbers_refer_to_the_concatenated_text(py_dir: Path) -> None:
    corpus = load_corpus(tmp_config(py_dir, "*.py"))
    functions = {(f.name, Path(f.file).name): f for f in parse_corpus(corpus).functions}
    only_b = functions[("only_b", "b.py")]
    assert corpus.lines[only_b.signature_line - 1] == "def only_b():"
    assert corpus.lines[only_b.body_start - 1] == "    z = 2"
    only_c = functions[("only_c", "c.py")]
    assert corpus.lines[only_c.body_start - 1 : only_c.body_end] == ["    x = 1", "    return x"]
    shared_b = functions[("shared", "b.py")]
    assert corpus.lines[shared_b.body_start - 1] == '    y = "b"'


def test_cross_file_name_collision_keeps_the_first_file(py_dir: Path) -> None:
    corpus = load_corpus(tmp_config(py_dir, "*.py"))
    target_set = find_targets(parse_corpus(corpus), primary_lines=2)
    shared = [t for t in target_set.eligible if t.name == "shared"]
    assert [Path(t.function.file).name for t in shared] == ["a.py"]
    assert shared[0].window(corpus.lines) == ['    x = "a"', "    return x"]
    assert shared[0].case_id == "shared"
    assert sorted(t.name for t in target_set.eligible) == ["only_b", "only_c", "shared"]
    assert not target_set.excluded


def test_a_glob_over_several_languages_parses_each_file_with_its_own_grammar(
    tmp_path: Path,
) -> None:
    write_sources(tmp_path, {
        "a.py": "def pyfunc():\n    return 1\n",
        "b.js": "function jsfunc() {\n\treturn 2;\n}\n",
        "c.go": "package c\n\nfunc GoFunc() int {\n\treturn 3\n}\n",
        "d.rb": "def rbfunc\n  4\nend\n",
    })
    corpus = load_corpus(tmp_config(tmp_path, "*"))
    assert corpus.language == "go+javascript+python+ruby"
    headers = [line for line in corpus.lines if "======" in line]
    assert [h.split(" ")[0] for h in headers] == ["#", "//", "//", "#"]
    functions = {f.name: f for f in parse_corpus(corpus).functions}
    assert {name: f.language for name, f in functions.items()} == {
        "pyfunc": "python", "jsfunc": "javascript", "GoFunc": "go", "rbfunc": "ruby",
    }
    for name, body in [("pyfunc", "    return 1"), ("jsfunc", "\treturn 2;"),
                       ("GoFunc", "\treturn 3"), ("rbfunc", "  4")]:
        assert corpus.lines[functions[name].body_start - 1] == body


def test_unsupported_and_unmatched_files_are_config_errors(tmp_path: Path) -> None:
    write_sources(tmp_path, {"notes.txt": "hello\n"})
    with pytest.raises(ConfigError, match=r"unsupported source file notes\.txt"):
        load_corpus(tmp_config(tmp_path, "*.txt"))
    with pytest.raises(ConfigError, match=r"matches no file"):
        load_corpus(tmp_config(tmp_path, "*.py"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_corpus(tmp_config(tmp_path / "missing", "*.py"))


def test_a_single_file_gets_no_header(py_dir: Path) -> None:
    corpus = load_corpus(tmp_config(py_dir, "b.py"))
    assert not corpus.multi_file
    assert corpus.text == (py_dir / "b.py").read_text(encoding="utf-8")
    assert corpus.files[0].first_line == 1
    assert not any("======" in line for line in corpus.lines)


def test_limit_caps_the_lexically_first_files(py_dir: Path) -> None:
    two = load_corpus(tmp_config(py_dir, "*.py", limit=2))
    assert [Path(f.path).name for f in two.files] == ["a.py", "b.py"]
    one = load_corpus(tmp_config(py_dir, "*.py", limit=1))
    assert not one.multi_file
    assert one.text == (py_dir / "a.py").read_text(encoding="utf-8")


def test_describe_records_the_exact_text(py_dir: Path) -> None:
    corpus = load_corpus(tmp_config(py_dir, "*.py"))
    described = corpus.describe()
    assert described["files"] == [f.path for f in corpus.files]
    assert described["lines"] == len(corpus.lines)
    changed = load_corpus(tmp_config(py_dir, "*.py", limit=2))
    assert changed.describe()["sha256"] != described["sha256"]


# --- config files -----------------------------------------------------------------------

VALID = """\
[files]
directory = "{directory}"
glob = "*.py"
limit = 2

[sample]
k = 4
seed = 7
primary_lines = 2
min_code_lines = 1

[scoring]
count_comments = false
relax_indent = true
"""


def write_config(tmp_path: Path, text: str, name: str = "mini") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace("{directory}", (tmp_path / "src").as_posix()), encoding="utf-8")
    return path


def test_a_valid_config_loads(tmp_path: Path, py_dir: Path) -> None:
    config = load_corpus_config(write_config(tmp_path, VALID))
    assert config.name == "mini"
    assert config.directory == py_dir
    assert (config.glob, config.limit) == ("*.py", 2)
    assert (config.sample.k, config.sample.seed, config.sample.primary_lines) == (4, 7, 2)
    assert config.sample.min_code_lines == 1
    assert config.scoring == ScoringPolicy(count_comments=False, relax_indent=True)
    assert resolve_corpus("mini", corpora_dir=tmp_path) == config
    assert resolve_corpus(str(tmp_path / "mini.toml")) == config


def test_scoring_section_is_optional(tmp_path: Path) -> None:
    text = VALID[: VALID.index("[scoring]")]
    assert load_corpus_config(write_config(tmp_path, text)).scoring == ScoringPolicy()


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ('glob = "*.py"\n', "", "glob"),
        ("seed = 7\n", "", "seed"),
        ("k = 4\n", "k = 4\nsamples = 3\n", "samples"),
        ("relax_indent = true\n", "relax_indent = true\nstrict = true\n", "strict"),
        ("k = 4\n", 'k = "16"\n', "k"),
        ("relax_indent = true\n", "relax_indent = 1\n", "relax_indent"),
        ("limit = 2\n", "limit = true\n", "limit"),
        ("primary_lines = 2\n", "primary_lines = 0\n", "primary_lines"),
        ('directory = "{directory}"\n', "directory = 3\n", "directory"),
    ],
)
def test_config_errors_name_the_file_and_the_key(tmp_path: Path, old: str, new: str, key: str):
    assert old in VALID
    path = write_config(tmp_path, VALID.replace(old, new))
    with pytest.raises(ConfigError) as caught:
        load_corpus_config(path)
    assert str(path) in str(caught.value)
    assert repr(key) in str(caught.value)


def test_missing_required_section_is_named(tmp_path: Path) -> None:
    path = write_config(tmp_path, VALID[VALID.index("[sample]") :])
    with pytest.raises(ConfigError, match=r"exactly one of \[files\] .* and \[repo\]") as caught:
        load_corpus_config(path)
    assert str(path) in str(caught.value)


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, VALID.replace("k = 4", "k = = 4"))
    with pytest.raises(ConfigError, match="invalid TOML") as caught:
        load_corpus_config(path)
    assert str(path) in str(caught.value)


def test_unknown_corpus_lists_the_configured_ones(tmp_path: Path) -> None:
    write_config(tmp_path, VALID, name="alpha")
    with pytest.raises(ConfigError, match=r"unknown corpus 'beta'.*configured corpora: alpha"):
        resolve_corpus("beta", corpora_dir=tmp_path)


def test_shipped_corpus_configs_load() -> None:
    for name in ("jquery", "http_server"):
        config = resolve_corpus(name)
        assert config.sample.primary_lines == 20
        assert config.scoring == ScoringPolicy()
        assert load_corpus(config).files[0].path == f"fixtures/{config.glob}"


def test_twins_within_one_file_of_a_multi_file_corpus_are_excluded(tmp_path: Path) -> None:
    twin = "def dup():\n    a = 1\n    return a\n"
    write_sources(tmp_path, {"a.py": twin + "\n\n" + twin, "b.py": twin})
    corpus = load_corpus(tmp_config(tmp_path, "*.py"))
    target_set = find_targets(parse_corpus(corpus), primary_lines=2)
    assert not target_set.eligible
    assert [Path(f.file).name for f in target_set.excluded] == ["a.py", "a.py"]


def test_a_files_glob_never_reads_through_a_symlink_or_outside_its_directory(
    tmp_path: Path,
) -> None:
    """Issue 32 item 1, corpus ``[files]`` globs: a glob that matches a symlink (to a
    credentials file, or to a directory outside the tree) leaves it out and says why."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "credentials.py").write_text('KEY = "SECRETCANARY"\n')
    (outside / "deep.py").write_text("def deep():\n    return 'SECRETCANARY'\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "real.py").write_text("def real():\n    return 1\n")
    (tree / "helpers.py").symlink_to(outside / "credentials.py")
    (tree / "sub").symlink_to(outside, target_is_directory=True)
    config = CorpusConfig(name="t", directory=tree, glob="**/*.py", source="t.toml")
    corpus = load_corpus(config)
    assert "SECRETCANARY" not in corpus.text
    assert [f.path for f in corpus.files] == [display_path(tree / "real.py")]
    assert [(i.path, i.reason) for i in corpus.left_out] == [("helpers.py", SYMLINK)]
    assert corpus.describe()["left_out"] == [{"path": "helpers.py", "reason": SYMLINK}]
    (tree / "pkg").mkdir()
    (tree / "pkg" / "ok.py").write_text("def ok():\n    return 1\n")
    through = load_corpus(CorpusConfig(name="t", directory=tree, glob="*/*.py", source="t"))
    assert "SECRETCANARY" not in through.text
    assert [f.path for f in through.files] == [display_path(tree / "pkg" / "ok.py")]
    assert [(i.path, i.reason) for i in through.left_out] == [
        ("sub/credentials.py", UNDER_SYMLINK), ("sub/deep.py", UNDER_SYMLINK)]
    parent = CorpusConfig(name="t", directory=tree, glob="../outside/*.py", source="t.toml")
    with pytest.raises(ConfigError, match=r"t.toml: .*matches no file.*2 left out.*outside"):
        load_corpus(parent)
    only_link = CorpusConfig(name="t", directory=tree, glob="helpers.py", source="t.toml")
    with pytest.raises(ConfigError, match=r"helpers\.py: a symbolic link"):
        load_corpus(only_link)
