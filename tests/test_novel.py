"""The generated novel_* corpora: shipped files, their invariants, and `needle novel`.

Every invariant is checked for every flavour, each read by a parser of its own language:
Python by ``ast``, TypeScript by the raw tree-sitter grammar (no extractor code involved).
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needle_lib.cli import main
from needle_lib.recall import novel
from needle_lib.recall.corpus import resolve_corpus
from needle_lib.recall.novel.code import BodyWriter
from needle_lib.recall.novel.names import NameRegistry
from needle_lib.recall.novel.pieces import MAX_CHUNK_LINES, FillerWriter
from needle_lib.recall.novel.prompts import recall_view
from needle_lib.recall.prompt import build_prompt
from needle_lib.recall.suite import load_suite
from needle_lib.tokens import REFERENCE, TOKENIZERS, count_tokens

PRIMARY_LINES = novel.PRIMARY_LINES
FLAVOURS = list(novel.FLAVOURS.values())
CORPORA = [(flavour, name) for flavour in FLAVOURS for name in flavour.sizes]
#: What a line of prose starts with, per flavour.
PROSE = {"python": ("#", '"""'), "typescript": ("//", "/*")}


@dataclass(frozen=True)
class Def:
    """A function or class as its language's own parser sees it."""

    kind: str  # "function" or "class"
    name: str
    line: int  # 1-based line of its header
    body_lines: int  # lines after the header, up to the closing brace if any
    top_level: bool


def python_defs(text: str) -> list[Def]:
    tree = ast.parse(text)
    defs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno
            defs.append(Def(kind, node.name, node.lineno, lines, node in tree.body))
    return sorted(defs, key=lambda d: d.line)


TS_KINDS = {
    "function_declaration": "function",
    "method_definition": "function",
    "class_declaration": "class",
}


def typescript_defs(text: str) -> list[Def]:
    import tree_sitter_typescript
    from tree_sitter import Language, Parser

    root = Parser(Language(tree_sitter_typescript.language_typescript())).parse(text.encode())
    assert not root.root_node.has_error, "the TypeScript grammar rejects the generated text"
    defs = []
    stack = [root.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in TS_KINDS:
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            assert name is not None and name.text is not None and body is not None
            lines = body.end_point.row - node.start_point.row - 1  # the brace's row is not body
            top = node.parent is not None and node.parent.type == "program"
            defs.append(
                Def(TS_KINDS[node.type], name.text.decode(), node.start_point.row + 1, lines, top)
            )
    return sorted(defs, key=lambda d: d.line)


READERS: dict[str, Callable[[str], list[Def]]] = {
    "python": python_defs,
    "typescript": typescript_defs,
}


@dataclass(frozen=True)
class Shipped:
    flavour: novel.Flavour
    name: str
    text: str
    lines: list[str]
    entry: dict
    defs: list[Def]

    @property
    def functions(self) -> list[Def]:
        return [d for d in self.defs if d.kind == "function"]


def read_manifest(flavour: novel.Flavour) -> dict:
    return json.loads((flavour.directory / novel.MANIFEST).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def shipped() -> dict[str, Shipped]:
    corpora = {}
    for flavour in FLAVOURS:
        for name, entry in read_manifest(flavour)["corpora"].items():
            text = (flavour.directory / entry["file"]).read_text(encoding="utf-8")
            defs = READERS[flavour.name](text)
            corpora[name] = Shipped(flavour, name, text, text.split("\n")[:-1], entry, defs)
    return corpora


ROTATED_SEEDS = "101,202,303"


@pytest.fixture(scope="module", params=FLAVOURS, ids=lambda f: f.name)
def rotated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Corpora of one flavour written by the CLI with rotated seeds."""
    flavour = request.param
    out = tmp_path_factory.mktemp(f"rotated-{flavour.name}")
    command = ["novel", "generate", "--flavour", flavour.name, "--out", str(out)]
    assert main([*command, "--seeds", ROTATED_SEEDS]) == 0
    return out


def rotated_flavour(directory: Path) -> novel.Flavour:
    return novel.FLAVOURS[json.loads((directory / novel.MANIFEST).read_text())["flavour"]]


# --- `needle novel` ---------------------------------------------------------------------


def test_check_passes_on_the_checked_in_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["novel", "check"]) == 0
    out = capsys.readouterr().out
    for flavour in FLAVOURS:  # without --dir it checks every flavour's shipped directory
        assert f"{flavour.directory} matches the generator" in out


def test_rotated_seeds_write_a_new_manifest(rotated: Path) -> None:
    flavour = rotated_flavour(rotated)
    recorded = json.loads((rotated / novel.MANIFEST).read_text(encoding="utf-8"))
    assert recorded["seeds"] == [101, 202, 303]
    assert sorted(p.name for p in rotated.iterdir()) == sorted(
        [novel.MANIFEST, *(f"{name}{flavour.syntax.extension}" for name in flavour.sizes)]
    )
    smallest = next(iter(flavour.sizes))
    shipped_targets = read_manifest(flavour)["corpora"][smallest]["targets"]
    old = {t["name"] for t in shipped_targets}
    new = {t["name"] for t in recorded["corpora"][smallest]["targets"]}
    assert len(new) == 18 and not old & new


def test_check_names_each_changed_or_missing_file(
    rotated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flavour = rotated_flavour(rotated)
    shutil.copytree(rotated, tmp_path, dirs_exist_ok=True)
    *untouched, edited, removed = [
        tmp_path / f"{name}{flavour.syntax.extension}" for name in flavour.sizes
    ]
    lines = edited.read_text(encoding="utf-8").split("\n")
    lines[99] += "  " + flavour.syntax.comment("edited")
    edited.write_text("\n".join(lines), encoding="utf-8")
    removed.unlink()
    assert main(["novel", "check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{edited}: differs from the regenerated file at line 100" in err
    assert f"{removed}: missing" in err
    assert "manifest.json" not in err
    assert not any(path.name in err for path in untouched)


def test_check_reports_a_missing_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["novel", "check", "--dir", str(tmp_path)]) == 1
    assert f"{tmp_path / novel.MANIFEST}: missing" in capsys.readouterr().err


@pytest.mark.parametrize("flavour", [None, "cobol"])
def test_check_names_a_manifest_without_a_known_flavour(
    flavour: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = read_manifest(novel.TYPESCRIPT_FLAVOUR)
    if flavour is None:
        del recorded["flavour"]
    else:
        recorded["flavour"] = flavour
    (tmp_path / novel.MANIFEST).write_text(json.dumps(recorded), encoding="utf-8")
    assert main(["novel", "check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"key 'flavour': {flavour!r} is not one of python, typescript" in err


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ("1,2", "three distinct non-negative integers"),
        ("1,1,2", "three distinct non-negative integers"),
        ("1,-2,3", "three distinct non-negative integers"),
        ("a,b,c", "not a comma-separated list of integers"),
    ],
)
def test_bad_seeds_are_refused_by_name(
    seeds: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["novel", "generate", "--out", str(tmp_path), "--seeds", seeds])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--seeds" in err and message in err
    assert not list(tmp_path.iterdir())


# --- generation -------------------------------------------------------------------------


def test_generation_is_deterministic_and_seed_driven(
    rotated: Path, shipped: dict[str, Shipped]
) -> None:
    flavour = rotated_flavour(rotated)
    again = novel.render(flavour, (101, 202, 303))
    for filename, text in again.items():
        assert (rotated / filename).read_bytes() == text.encode("utf-8"), filename
    smallest = next(iter(flavour.sizes))
    assert again[f"{smallest}{flavour.syntax.extension}"] != shipped[smallest].text


def test_flavours_share_no_target_name(shipped: dict[str, Shipped]) -> None:
    """Each flavour has its own seeds: its corpora are not a transliteration of another's."""
    names = [
        {t["name"] for t in shipped[next(iter(flavour.sizes))].entry["targets"]}
        for flavour in FLAVOURS
    ]
    assert not set.intersection(*names)


def _wrapped(flavour: novel.Flavour, body: list[str]) -> str:
    syntax = flavour.syntax
    closing = [syntax.close()] if syntax.closers else []
    return "\n".join([syntax.function("fn_x", ["ab_1"], {}), *body, *closing]) + "\n"


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_lines=st.integers(1, 60))
def test_a_body_has_exactly_the_requested_lines_and_parses(
    flavour: novel.Flavour, seed: int, n_lines: int
) -> None:
    writer = BodyWriter(
        flavour.syntax, random.Random(seed), random.Random(seed + 1), ("hq_helper",), ("ab_1",)
    )
    body = writer.body(n_lines)
    assert len(body) == n_lines
    assert READERS[flavour.name](_wrapped(flavour, body)) == [
        Def("function", "fn_x", 1, n_lines, True)
    ]


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_lines=st.integers(1, MAX_CHUNK_LINES + 4))
def test_a_filler_chunk_has_exactly_the_requested_lines_and_parses(
    flavour: novel.Flavour, seed: int, n_lines: int
) -> None:
    writer = FillerWriter(flavour.syntax, random.Random(seed), NameRegistry(), ("hq_helper",))
    chunk = writer.chunk(n_lines)
    assert len(chunk.lines) == n_lines
    defs = READERS[flavour.name]("\n".join(chunk.lines) + "\n")
    assert sum(d.kind == "function" for d in defs) == chunk.functions
    assert all(d.body_lines < PRIMARY_LINES for d in defs)


# --- the shipped corpora ----------------------------------------------------------------


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_manifest_records_the_same_18_targets_six_per_seed(flavour: novel.Flavour) -> None:
    manifest = read_manifest(flavour)
    assert manifest["generator_version"] == novel.GENERATOR_VERSION
    assert manifest["flavour"] == flavour.name
    assert list(manifest["corpora"]) == list(flavour.sizes)
    seeds = manifest["seeds"]
    assert seeds == list(flavour.default_seeds)
    names = [[t["name"] for t in entry["targets"]] for entry in manifest["corpora"].values()]
    assert len(set(names[0])) == 18
    assert all(other == names[0] for other in names)
    for entry in manifest["corpora"].values():
        per_seed = [sum(t["seed"] == seed for t in entry["targets"]) for seed in seeds]
        assert per_seed == [6, 6, 6]


def test_sizes_hashes_and_counts_match_the_files(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        entry = corpus.entry
        assert entry["file"] == corpus.name + corpus.flavour.syntax.extension
        assert entry["context_tokens"] == corpus.flavour.sizes[corpus.name] * 1024
        assert entry["prompt_budget"] == entry["context_tokens"] - 2048
        assert entry["chars"] == len(corpus.text)
        assert entry["corpus_tokens"] == {
            name: count_tokens(corpus.text, name) for name in TOKENIZERS
        }
        assert entry["sha256"] == hashlib.sha256(corpus.text.encode("utf-8")).hexdigest()
        assert entry["lines"] == len(corpus.lines)
        assert entry["function_count"] == len(corpus.functions)


@pytest.mark.parametrize(("flavour", "name"), CORPORA, ids=[name for _, name in CORPORA])
def test_every_prompt_of_a_shipped_corpus_fits_its_context(
    flavour: novel.Flavour, name: str, shipped: dict[str, Shipped]
) -> None:
    """The size rule, measured on the prompts a run really sends (whole text, every target,
    with and without the /no_think suffix), and the manifest records those counts."""
    suite = load_suite(resolve_corpus(name))
    assert suite.corpus.language == flavour.syntax.language
    assert suite.config.sample.primary_lines == PRIMARY_LINES
    assert len(suite.targets) == 18
    budget = shipped[name].entry["prompt_budget"]
    counts = {
        no_think: [
            count_tokens(build_prompt(suite.corpus, target, no_think=no_think))
            for target in suite.targets
        ]
        for no_think in (False, True)
    }
    assert 0.9 * budget <= min(counts[False]) and max(counts[True]) <= budget, counts
    recorded = shipped[name].entry["prompt_tokens"]
    assert set(recorded) == set(TOKENIZERS)
    assert recorded[REFERENCE] == {"min": min(counts[True]), "max": max(counts[True])}


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_generator_targets_are_the_extracted_targets(flavour: novel.Flavour) -> None:
    """The generator sizes files by prompts of targets it builds itself; they must be the
    very targets extraction finds, or it measures prompts no run sends."""
    corpora = {corpus.name: corpus for corpus in novel.build_corpora(flavour)}
    for name in flavour.sizes:
        _, built = recall_view(corpora[name])
        suite = load_suite(resolve_corpus(name))
        assert sorted(built, key=lambda t: t.name) == sorted(suite.targets, key=lambda t: t.name)


def test_only_the_targets_are_eligible(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        targets = {t["name"] for t in corpus.entry["targets"]}
        for d in corpus.defs:
            if d.name in targets:
                assert d.body_lines >= PRIMARY_LINES, (corpus.name, d.name)
            else:
                assert d.body_lines < PRIMARY_LINES, (corpus.name, d.name)


def test_every_def_name_is_unique(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        names = [d.name for d in corpus.functions]
        assert len(names) == len(set(names)), corpus.name


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_targets_are_byte_identical_at_matched_relative_positions(
    flavour: novel.Flavour, shipped: dict[str, Shipped]
) -> None:
    sources: dict[str, set[str]] = {}
    positions: dict[str, list[float]] = {}
    for name in flavour.sizes:
        corpus = shipped[name]
        defs = {d.name: d for d in corpus.functions}
        for target in corpus.entry["targets"]:
            d = defs[target["name"]]
            assert (d.line, d.line + 1) == (target["def_line"], target["start_line"])
            assert target["body_lines"] == d.body_lines
            position = target["start_line"] / len(corpus.lines)
            assert target["relative_position"] == pytest.approx(position, abs=1e-6)
            positions.setdefault(target["name"], []).append(position)
            source = "\n".join(corpus.lines[d.line - 1 : d.line + d.body_lines])
            sources.setdefault(target["name"], set()).add(source)
    assert all(len(variants) == 1 for variants in sources.values())
    assert all(len(where) == len(flavour.sizes) for where in positions.values())
    for name, where in positions.items():
        assert max(where) - min(where) <= 0.01, name
    smallest = shipped[next(iter(flavour.sizes))]
    first = [positions[t["name"]][0] for t in smallest.entry["targets"]]
    assert first == sorted(first) and first[0] < 0.1 and first[-1] > 0.9


def _masked(line: str) -> str:
    """A line's shape: literals, doc comments and operators blanked out."""
    line = re.sub(r"(?<![\w)\]])-(?=\d)", "", line)  # a unary minus belongs to its literal
    line = re.sub(r'"[^"]*"|`[^`]*`|/\*.*?\*/|\b\d[\w.]*', "L", line.strip())
    return re.sub(r"[-+*/%^|&<>=!]+", "O", line)


def test_each_target_has_a_near_named_neighbouring_decoy(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        top = [d for d in corpus.functions if d.top_level]
        for target in corpus.entry["targets"]:
            index = next(i for i, d in enumerate(top) if d.name == target["name"])
            neighbours = {top[i].name: top[i] for i in (index - 1, index + 1) if 0 <= i < len(top)}
            assert target["decoy"] in neighbours, (corpus.name, target["name"])
            decoy = neighbours[target["decoy"]]
            stem, number = target["name"].rsplit("_", 1)
            n = int(number)
            assert decoy.name in {f"{stem}_{n - 1}", f"{stem}_{n + 1}", f"{stem}{n}"}
            assert decoy.body_lines < PRIMARY_LINES
            opening = [_masked(corpus.lines[d.line]) for d in (top[index], decoy)]
            assert opening[0] == opening[1], (corpus.name, target["name"])


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_target_bodies_are_almost_all_code(
    flavour: novel.Flavour, shipped: dict[str, Shipped]
) -> None:
    corpus = shipped[next(iter(flavour.sizes))]
    defs = {d.name: d for d in corpus.functions}
    for target in corpus.entry["targets"]:
        d = defs[target["name"]]
        body = corpus.lines[d.line : d.line + d.body_lines]
        prose = [line for line in body if line.strip().startswith(PROSE[flavour.name])]
        blank = [line for line in body if not line.strip()]
        assert not blank
        assert (len(body) - len(prose)) / len(body) >= 0.9, target["name"]
        # Every line carrying a literal is unique: no line can be inferred from another.
        literal = [line for line in body if re.search(r'[\d"`]', line)]
        assert len(literal) >= len(body) * 0.75
        assert len(set(literal)) == len(literal), f"{target['name']} repeats a line"
