"""Shared helpers for the recall-core tests: real fixtures parsed once, tiny tmp corpora.

The real fixtures are parsed once per test process (esprima needs ~1.5 s for jQuery), not
through the on-disk cache: these tests pin the extractor itself, and must not read a parse
an older extractor left in ``.needle-cache``.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass
from pathlib import Path

from needle_lib.recall.corpus import (
    Corpus,
    CorpusConfig,
    SamplePolicy,
    load_corpus,
    resolve_corpus,
)
from needle_lib.recall.extract import FunctionDef, ParsedCorpus, parse_corpus
from needle_lib.recall.targets import TargetSet, find_targets


@dataclass(frozen=True)
class Loaded:
    """A corpus with its parse and its primary_lines-20 target set."""

    corpus: Corpus
    parsed: ParsedCorpus
    lines: list[str]
    targets: TargetSet

    def function(self, name: str) -> FunctionDef:
        found = [f for f in self.parsed.functions if f.name == name]
        assert len(found) == 1, f"{name}: {len(found)} definitions"
        return found[0]


@functools.cache
def real_corpus(name: str) -> Loaded:
    """A shipped corpus config (``jquery``, ``http_server``), loaded and parsed once."""
    corpus = load_corpus(resolve_corpus(name))
    parsed = cached_parse(corpus)
    return Loaded(corpus, parsed, corpus.lines, find_targets(parsed, 20))


def cached_parse(corpus: Corpus) -> ParsedCorpus:
    """``parse_corpus`` memoised by corpus text: a stand-in for the on-disk cache."""
    return _parse_by_text(corpus)


@functools.cache
def _parse_by_text(corpus: Corpus) -> ParsedCorpus:
    return parse_corpus(corpus)


def write_sources(directory: Path, files: dict[str, str]) -> Path:
    """Write dedented source files into ``directory``; return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return directory


def tmp_config(
    directory: Path, glob: str, *, limit: int | None = None, primary_lines: int = 3
) -> CorpusConfig:
    return CorpusConfig(
        name="tmp",
        directory=directory,
        glob=glob,
        limit=limit,
        sample=SamplePolicy(k=16, seed=1, primary_lines=primary_lines),
        source=str(directory / "tmp.toml"),
    )


def parse_source(tmp_path: Path, filename: str, text: str) -> tuple[Corpus, ParsedCorpus]:
    """A one-file corpus from ``text`` (dedented), parsed."""
    write_sources(tmp_path, {filename: text})
    corpus = load_corpus(tmp_config(tmp_path, filename))
    return corpus, parse_corpus(corpus)


def by_name(parsed: ParsedCorpus) -> dict[str, FunctionDef]:
    """Functions by name; the test sources define each name once."""
    functions = {f.name: f for f in parsed.functions}
    assert len(functions) == len(parsed.functions), "test source repeats a name"
    return functions


def body(corpus: Corpus, function: FunctionDef) -> list[str]:
    return corpus.lines[function.body_start - 1 : function.body_end]
