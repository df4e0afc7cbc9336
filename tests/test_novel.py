"""The generated novel_* corpora: shipped files, their invariants, and `needle novel`."""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import shutil
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
FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Shipped:
    name: str
    text: str
    lines: list[str]
    tree: ast.Module
    entry: dict
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef]


def body_length(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """Lines after the one-line header, as the extractor counts them."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno


def functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, FUNCTION)]


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((novel.NOVEL_DIR / novel.MANIFEST).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def shipped(manifest: dict) -> dict[str, Shipped]:
    corpora = {}
    for name, entry in manifest["corpora"].items():
        text = (novel.NOVEL_DIR / entry["file"]).read_text(encoding="utf-8")
        tree = ast.parse(text)
        corpora[name] = Shipped(name, text, text.split("\n")[:-1], tree, entry, functions(tree))
    return corpora


ROTATED_SEEDS = "101,202,303"


@pytest.fixture(scope="module")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Corpora written by the CLI with rotated seeds."""
    out = tmp_path_factory.mktemp("rotated")
    assert main(["novel", "generate", "--out", str(out), "--seeds", ROTATED_SEEDS]) == 0
    return out


# --- `needle novel` ---------------------------------------------------------------------


def test_check_passes_on_the_checked_in_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["novel", "check"]) == 0
    assert "matches the generator" in capsys.readouterr().out


def test_rotated_seeds_write_a_new_manifest(rotated: Path, manifest: dict) -> None:
    recorded = json.loads((rotated / novel.MANIFEST).read_text(encoding="utf-8"))
    assert recorded["seeds"] == [101, 202, 303]
    assert sorted(p.name for p in rotated.iterdir()) == sorted(
        [novel.MANIFEST, *(f"{name}.py" for name in novel.SIZES)]
    )
    old = {t["name"] for t in manifest["corpora"]["novel_16k"]["targets"]}
    new = {t["name"] for t in recorded["corpora"]["novel_16k"]["targets"]}
    assert len(new) == 18 and not old & new


def test_check_names_each_changed_or_missing_file(
    rotated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(rotated, tmp_path, dirs_exist_ok=True)
    edited = tmp_path / "novel_64k.py"
    lines = edited.read_text(encoding="utf-8").split("\n")
    lines[99] += "  # edited"
    edited.write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "novel_128k.py").unlink()
    assert main(["novel", "check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{edited}: differs from the regenerated file at line 100" in err
    assert f"{tmp_path / 'novel_128k.py'}: missing" in err
    assert "novel_16k.py" not in err and "manifest.json" not in err


def test_check_reports_a_missing_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["novel", "check", "--dir", str(tmp_path)]) == 1
    assert f"{tmp_path / novel.MANIFEST}: missing" in capsys.readouterr().err


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
    again = novel.render((101, 202, 303))
    for filename, text in again.items():
        assert (rotated / filename).read_bytes() == text.encode("utf-8"), filename
    assert again["novel_16k.py"] != shipped["novel_16k"].text


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_lines=st.integers(1, 60))
def test_a_body_has_exactly_the_requested_lines_and_parses(seed: int, n_lines: int) -> None:
    writer = BodyWriter(random.Random(seed), random.Random(seed + 1), ("hq_helper",), ("ab_1",))
    body = writer.body(n_lines)
    assert len(body) == n_lines
    tree = ast.parse("def fn_x(ab_1):\n" + "\n".join(body) + "\n")
    assert body_length(tree.body[0]) == n_lines


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_lines=st.integers(1, MAX_CHUNK_LINES + 4))
def test_a_filler_chunk_has_exactly_the_requested_lines_and_parses(seed: int, n_lines: int) -> None:
    chunk = FillerWriter(random.Random(seed), NameRegistry(), ("hq_helper",)).chunk(n_lines)
    assert len(chunk.lines) == n_lines
    tree = ast.parse("\n".join(chunk.lines) + "\n")
    assert len(functions(tree)) == chunk.functions
    assert all(
        body_length(node) < PRIMARY_LINES
        for node in ast.walk(tree)
        if isinstance(node, (*FUNCTION, ast.ClassDef))
    )


# --- the shipped corpora ----------------------------------------------------------------


def test_manifest_records_the_same_18_targets_six_per_seed(manifest: dict) -> None:
    assert manifest["generator_version"] == novel.GENERATOR_VERSION
    assert list(manifest["corpora"]) == list(novel.SIZES)
    seeds = manifest["seeds"]
    names = [[t["name"] for t in entry["targets"]] for entry in manifest["corpora"].values()]
    assert len(set(names[0])) == 18
    assert all(other == names[0] for other in names)
    for entry in manifest["corpora"].values():
        per_seed = [sum(t["seed"] == seed for t in entry["targets"]) for seed in seeds]
        assert per_seed == [6, 6, 6]


def test_sizes_hashes_and_counts_match_the_files(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        entry = corpus.entry
        assert entry["context_tokens"] == novel.SIZES[corpus.name] * 1024
        assert entry["prompt_budget"] == entry["context_tokens"] - 2048
        assert entry["chars"] == len(corpus.text)
        assert entry["corpus_tokens"] == {
            name: count_tokens(corpus.text, name) for name in TOKENIZERS
        }
        assert entry["sha256"] == hashlib.sha256(corpus.text.encode("utf-8")).hexdigest()
        assert entry["lines"] == len(corpus.lines)
        assert entry["function_count"] == len(corpus.functions)


@pytest.mark.parametrize("name", list(novel.SIZES))
def test_every_prompt_of_a_shipped_corpus_fits_its_context(
    name: str, shipped: dict[str, Shipped]
) -> None:
    """The size rule, measured on the prompts a run really sends (whole text, every target,
    with and without the /no_think suffix), and the manifest records those counts."""
    suite = load_suite(resolve_corpus(name))
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


def test_generator_targets_are_the_extracted_targets(shipped: dict[str, Shipped]) -> None:
    """The generator sizes files by prompts of targets it builds itself; they must be the
    very targets extraction finds, or it measures prompts no run sends."""
    corpora = {corpus.name: corpus for corpus in novel.build_corpora()}
    for name in novel.SIZES:
        _, built = recall_view(corpora[name])
        suite = load_suite(resolve_corpus(name))
        assert sorted(built, key=lambda t: t.name) == sorted(suite.targets, key=lambda t: t.name)


def test_only_the_targets_are_eligible(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        targets = {t["name"] for t in corpus.entry["targets"]}
        for node in corpus.functions:
            if node.name in targets:
                assert body_length(node) >= PRIMARY_LINES, (corpus.name, node.name)
            else:
                assert body_length(node) < PRIMARY_LINES, (corpus.name, node.name)
        classes = [n for n in ast.walk(corpus.tree) if isinstance(n, ast.ClassDef)]
        assert all(body_length(node) < PRIMARY_LINES for node in classes)


def test_every_def_name_is_unique(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        names = [node.name for node in corpus.functions]
        assert len(names) == len(set(names)), corpus.name


def test_targets_are_byte_identical_at_matched_relative_positions(
    shipped: dict[str, Shipped],
) -> None:
    sources: dict[str, set[str]] = {}
    positions: dict[str, list[float]] = {}
    for corpus in shipped.values():
        defs = {node.name: node for node in corpus.functions}
        for target in corpus.entry["targets"]:
            node = defs[target["name"]]
            assert (node.lineno, node.lineno + 1) == (target["def_line"], target["start_line"])
            assert target["body_lines"] == body_length(node)
            position = target["start_line"] / len(corpus.lines)
            assert target["relative_position"] == pytest.approx(position, abs=1e-6)
            positions.setdefault(target["name"], []).append(position)
            source = "\n".join(corpus.lines[node.lineno - 1 : node.end_lineno])
            sources.setdefault(target["name"], set()).add(source)
    assert all(len(variants) == 1 for variants in sources.values())
    for name, where in positions.items():
        assert max(where) - min(where) <= 0.01, name
    first = [positions[t["name"]][0] for t in shipped["novel_16k"].entry["targets"]]
    assert first == sorted(first) and first[0] < 0.1 and first[-1] > 0.9


def _masked(line: str) -> str:
    """A line's shape: literals and operators blanked out."""
    line = re.sub(r"(?<![\w)\]])-(?=\d)", "", line)  # a unary minus belongs to its literal
    line = re.sub(r'"[^"]*"|\b\d[\w.]*', "L", line.strip())
    return re.sub(r"[-+*/%^|&<>=!]+", "O", line)


def test_each_target_has_a_near_named_neighbouring_decoy(shipped: dict[str, Shipped]) -> None:
    for corpus in shipped.values():
        top = [node for node in corpus.tree.body if isinstance(node, FUNCTION)]
        for target in corpus.entry["targets"]:
            index = next(i for i, node in enumerate(top) if node.name == target["name"])
            neighbours = {top[i].name: top[i] for i in (index - 1, index + 1) if 0 <= i < len(top)}
            assert target["decoy"] in neighbours, (corpus.name, target["name"])
            decoy = neighbours[target["decoy"]]
            stem, number = target["name"].rsplit("_", 1)
            n = int(number)
            assert decoy.name in {f"{stem}_{n - 1}", f"{stem}_{n + 1}", f"{stem}{n}"}
            assert body_length(decoy) < PRIMARY_LINES
            opening = [_masked(corpus.lines[node.lineno]) for node in (top[index], decoy)]
            assert opening[0] == opening[1], (corpus.name, target["name"])


def test_target_bodies_are_almost_all_code(shipped: dict[str, Shipped]) -> None:
    corpus = shipped["novel_16k"]
    defs = {node.name: node for node in corpus.functions}
    for target in corpus.entry["targets"]:
        node = defs[target["name"]]
        body = corpus.lines[node.lineno : node.end_lineno]
        prose = [line for line in body if line.strip().startswith(("#", '"""'))]
        blank = [line for line in body if not line.strip()]
        assert not blank
        assert (len(body) - len(prose)) / len(body) >= 0.9, target["name"]
        # Every line carrying a literal is unique: no line can be inferred from another.
        literal = [line for line in body if re.search(r'[\d"]', line)]
        assert len(literal) >= len(body) * 0.75
        assert len(set(literal)) == len(literal), f"{target['name']} repeats a line"
