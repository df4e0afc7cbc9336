"""Corpus configs and corpus text: which files a model reads, in which order.

A corpus is one or more source files. Several files are concatenated in lexical order with a
header per file, written in that file's own line-comment syntax, so the model sees the
boundaries; every line number elsewhere in Needle refers to this concatenated text. A glob
may match several languages: each file is parsed with its own grammar. A file the glob
matches through a symlink, or outside the ``[files]`` directory, is left out and named
(``recall.confined``): the corpus goes to a model server whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from needle_lib.contract.records import CorpusDescription
from needle_lib.paths import CORPORA_DIR, REPO_ROOT, resolve_repo_path
from needle_lib.recall.confined import LeftOut, confine, left_out_message, refusal
from needle_lib.recall.languages import LANGUAGES, language_of, supported_extensions
from needle_lib.recall.repo import (
    REPO_SCHEMA,
    KnownContext,
    RepoSnapshot,
    RepoSpec,
    choose_files,
    recorded_texts,
    sized,
)
from needle_lib.tokens import REFERENCE, counted_tokens
from needle_lib.tomlconf import ConfigError, Key, check_section, load_toml

FILES_SCHEMA = {"directory": Key((str,), True), "glob": Key((str,), True), "limit": Key((int,))}
SAMPLE_SCHEMA = {
    "k": Key((int,), True),
    "seed": Key((int,), True),
    "primary_lines": Key((int,), True),
    "min_code_lines": Key((int,)),
}
SCORING_SCHEMA = {"count_comments": Key((bool,)), "relax_indent": Key((bool,))}
TOP_SCHEMA = {
    "files": Key((dict,)),
    "repo": Key((dict,)),
    "sample": Key((dict,), True),
    "scoring": Key((dict,)),
}


@dataclass(frozen=True)
class SamplePolicy:
    k: int = 16
    seed: int = 42
    primary_lines: int = 20
    min_code_lines: int = 0


@dataclass(frozen=True)
class ScoringPolicy:
    """How answers are scored. Set per corpus or per run, never per model, so every model
    in a comparison is judged by the same rules."""

    count_comments: bool = True
    relax_indent: bool = False


@dataclass(frozen=True)
class CorpusConfig:
    name: str
    directory: Path
    glob: str
    limit: int | None = None
    sample: SamplePolicy = field(default_factory=SamplePolicy)
    scoring: ScoringPolicy = field(default_factory=ScoringPolicy)
    source: str = ""
    repo: RepoSpec | None = None  # set: the files come from this git checkout, not the glob


def load_corpus_config(path: Path) -> CorpusConfig:
    """Load and validate ``configs/corpora/<name>.toml``; errors name the file and key."""
    data = check_section(load_toml(path), TOP_SCHEMA, path=path)
    if ("files" in data) == ("repo" in data):
        raise ConfigError(f"{path}: give exactly one of [files] (a glob) and [repo] (a checkout)")
    sample = check_section(data["sample"], SAMPLE_SCHEMA, path=path, section="sample")
    scoring = check_section(data.get("scoring", {}), SCORING_SCHEMA, path=path, section="scoring")
    for key in ("k", "primary_lines"):
        if sample[key] < 1:
            raise ConfigError(f"{path}: [sample] key {key!r} must be at least 1")
    config = CorpusConfig(
        name=path.stem,
        directory=path.parent,
        glob="",
        sample=SamplePolicy(**sample),
        scoring=ScoringPolicy(**scoring),
        source=str(path),
    )
    if "repo" in data:
        repo = check_section(data["repo"], REPO_SCHEMA, path=path, section="repo")
        spec = RepoSpec(
            path=resolve_repo_path(repo["path"]),
            include=_globs(repo.get("include", []), path, "include"),
            exclude=_globs(repo.get("exclude", []), path, "exclude"),
            max_prompt_tokens=repo.get("max_prompt_tokens"),
            budget_source=f"max_prompt_tokens of {path}" if "max_prompt_tokens" in repo else None,
        )
        return replace(config, directory=spec.path, repo=spec)
    files = check_section(data["files"], FILES_SCHEMA, path=path, section="files")
    return replace(
        config,
        directory=resolve_repo_path(files["directory"]),
        glob=files["glob"],
        limit=files.get("limit"),
    )


def _globs(value: list, path: Path, key: str) -> tuple[str, ...]:
    if not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: [repo] key {key!r} must be a list of glob strings")
    return tuple(value)


def repo_config(path: str | Path, sample: SamplePolicy | None = None) -> CorpusConfig:
    """``--repo PATH`` mode: a checkout, no corpus config, default sampling and scoring."""
    root = Path(path).resolve()
    return CorpusConfig(
        name=f"repo_{root.name}",
        directory=root,
        glob="",
        sample=sample or SamplePolicy(),
        source=f"repo:{root}",
        repo=RepoSpec(root),
    )


def resolve_corpus(value: str, corpora_dir: Path = CORPORA_DIR) -> CorpusConfig:
    """An existing TOML path, else ``configs/corpora/<value>.toml``."""
    path = Path(value)
    if path.suffix == ".toml" and path.is_file():
        return load_corpus_config(path)
    named = corpora_dir / f"{value}.toml"
    if named.is_file():
        return load_corpus_config(named)
    known = ", ".join(configured_corpus_names(corpora_dir)) or "none"
    raise ConfigError(f"unknown corpus {value!r}: no {named} (configured corpora: {known})")


def configured_corpus_names(corpora_dir: Path = CORPORA_DIR) -> list[str]:
    return sorted(p.stem for p in corpora_dir.glob("*.toml"))


def single_file_config(path: str | Path, sample: SamplePolicy | None = None) -> CorpusConfig:
    """``--file PATH`` mode: one file, no corpus config, default sampling and scoring."""
    file = resolve_repo_path(path) if not Path(path).exists() else Path(path).resolve()
    if not file.is_file():
        raise ConfigError(f"--file {path}: no such file")
    return CorpusConfig(
        name=file.stem,
        directory=file.parent,
        glob=file.name,
        limit=1,
        sample=sample or SamplePolicy(),
        source=f"file:{file}",
    )


def sized_for(
    config: CorpusConfig, contexts: Sequence[KnownContext], max_prompt_tokens: int | None = None
) -> CorpusConfig:
    """A repo corpus config with its prompt budget settled — ``max_prompt_tokens`` (the
    command line) over the config's own, else from the models' contexts (their configs' or
    their servers'); any other config unchanged."""
    if config.repo is None:
        return config
    spec = config.repo
    if max_prompt_tokens is not None:
        spec = replace(spec, max_prompt_tokens=max_prompt_tokens,
                       budget_source="--max-prompt-tokens")
    return replace(config, repo=sized(spec, contexts))


@dataclass(frozen=True)
class CorpusFile:
    path: str  # as shown to the model: relative to the repo root when inside it
    first_line: int  # 1-based line of the file's first source line in the corpus text
    line_count: int
    language: str  # a key of ``languages.LANGUAGES``: which parser reads this file


@dataclass(frozen=True)
class Corpus:
    name: str
    language: str  # the files' language, or their languages joined by "+" (sorted)
    text: str
    files: tuple[CorpusFile, ...]
    repo: RepoSnapshot | None = None  # where a ``--repo`` corpus came from
    #: Files the glob or the checkout matched but Needle refused to read (symlinks, paths
    #: outside the tree): recorded and reported, never sent.
    left_out: tuple[LeftOut, ...] = ()

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def multi_file(self) -> bool:
        return len(self.files) > 1

    @cached_property
    def tokens(self) -> int:
        """The corpus text's size under the reference tokenizer."""
        return counted_tokens(self.text)

    def describe(self) -> CorpusDescription:
        """The corpus block of a dump: enough to prove two runs read the same text."""
        described: CorpusDescription = {
            "name": self.name,
            "sha256": self.sha256,
            "files": [f.path for f in self.files],
            "chars": len(self.text),
            "lines": len(self.lines),
            "tokens": self.tokens,
            "tokenizer": REFERENCE,
            "language": self.language,
        }
        if self.repo is not None:
            described["repo"] = self.repo.describe()
        if self.left_out:
            described["left_out"] = [item.describe() for item in self.left_out]
        return described

    def left_out_message(self) -> str | None:
        """The line a run prints about the files it did not read, if any."""
        return left_out_message(self.name, self.left_out)


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only: ``str.splitlines`` also breaks on form feeds and other
    separators that parsers do not count, which would shift every line number after them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def load_corpus(config: CorpusConfig) -> Corpus:
    """Read the files a config selects and build the corpus text."""
    if config.repo is not None:
        snapshot, texts = choose_files(config.repo, config.sample.seed)
        corpus = build_corpus(config.name, list(zip(snapshot.files, texts, strict=True)))
        return replace(corpus, repo=snapshot, left_out=snapshot.left_out)
    if not config.directory.is_dir():
        raise ConfigError(f"{config.source}: [files] directory {config.directory} does not exist")
    matched = sorted(p for p in config.directory.glob(config.glob) if p.is_file())
    names, left_out = confine(
        config.directory, [os.path.relpath(p, config.directory) for p in matched]
    )
    paths = [config.directory / name for name in names]
    if config.limit is not None:
        paths = paths[: config.limit]
    if not paths:
        refused = f" ({len(left_out)} left out: {left_out[0].path}: {left_out[0].reason})" \
            if left_out else ""
        raise ConfigError(
            f"{config.source}: [files] glob {config.glob!r} matches no file in "
            f"{config.directory}{refused}"
        )
    unreadable = next((p for p in paths if language_of(p) is None), None)
    if unreadable is not None:
        raise ConfigError(
            f"{config.source}: unsupported source file {unreadable.name} "
            f"(supported: {supported_extensions()})"
        )
    corpus = build_corpus(
        config.name, [(display_path(p), p.read_text(encoding="utf-8")) for p in paths]
    )
    return replace(corpus, left_out=tuple(left_out))


def recorded_repo_corpus(block: Mapping[str, Any]) -> Corpus:
    """The text a ``--repo`` dump was asked about, rebuilt from its ``corpus`` block: the
    recorded files of the recorded checkout, as they are now or as the recorded commit has
    them, whichever hashes to the dump's sha256. ``needle rescore`` needs no corpus config
    for such a dump; when neither matches, the error says what is missing and how to get it
    back."""
    repo = block["repo"]
    root, commit, files = Path(repo["path"]), repo["commit"], list(block["files"])
    if not root.is_dir():
        raise ConfigError(
            f"corpus {block['name']!r} came from --repo {root}, which no longer exists: "
            f"restore that checkout (commit {commit[:12]}) to re-score this dump"
        )
    for name in files:  # a dump is a file anyone can edit: it never picks what is read
        if (why := refusal(root, name)) is not None:
            raise ConfigError(
                f"corpus {block['name']!r}: the dump's file {name!r} is not read ({why}); "
                f"a --repo dump lists files inside {root}, so it was edited or the checkout "
                "changed since the run"
            )
    tried: list[str] = []
    for where, texts in recorded_texts(root, commit, files).items():
        corpus = build_corpus(block["name"], list(zip(files, texts, strict=True)))
        if corpus.sha256 == block["sha256"]:
            return corpus
        tried.append(where)
    dirty = " (the run had local changes: restore them too)" if repo.get("dirty") else ""
    looked = " and ".join(tried) or "neither the checkout nor the commit holds every file"
    raise ConfigError(
        f"corpus {block['name']!r}: the {len(files)} recorded file(s) of --repo {root} no "
        f"longer make the text this dump was asked about (sha256 {block['sha256'][:12]}…; "
        f"tried the {looked}): check out commit {commit[:12]}{dirty} and run again"
    )


def build_corpus(name: str, sources: list[tuple[str, str]]) -> Corpus:
    """The corpus text of ``(shown path, text)`` pairs, in the order given: one file as it
    is, several each under a ``====== path ======`` header in its own comment syntax."""
    languages = [_language_name(path, text) for path, text in sources]
    language = "+".join(sorted(set(languages)))
    if len(sources) == 1:
        (path, text), = sources
        files = (CorpusFile(path, 1, len(split_lines(text)), languages[0]),)
        return Corpus(name, language, text, files)
    parts: list[str] = []
    files_list: list[CorpusFile] = []
    line = 1
    for (shown, text), lang in zip(sources, languages, strict=True):
        body = text if text.endswith("\n") else text + "\n"
        parts.append(f"{LANGUAGES[lang].line_comment} ====== {shown} ======\n")
        parts.append(body)
        count = len(split_lines(body))
        files_list.append(CorpusFile(shown, line + 1, count, lang))
        line += 1 + count
    return Corpus(name, language, "".join(parts), tuple(files_list))


def _language_name(path: str, text: str) -> str:
    language = language_of(path, text)
    if language is None:
        raise ConfigError(f"{path}: unsupported source file (supported: {supported_extensions()})")
    return language.name
