"""A corpus from the user's own git checkout: ``--repo PATH`` or a ``[repo]`` corpus config.

Which files: those git would consider (tracked, plus untracked ones that ``.gitignore``
does not exclude) under the named folder — a subfolder of a checkout means that subfolder,
never the rest of the repository, whose code the user did not offer to send to a server —
in a language recall reads, matching the include globs and none of the exclude globs.
How many: as many as fit the prompt budget, chosen by a shuffle seeded with the sampling
seed — deterministic for one checkout, budget and seed, yet spread over the whole tree
rather than the alphabetically first directories. The chosen files are then
concatenated in path order. A symlink, a file under a symlinked directory, and anything
that resolves outside the checkout are never read (``recall.confined``); the snapshot
lists them with the reason. The commit hash, whether any chosen file has local changes, and
the file list go into the dump, so two models are compared on the same text (the corpus
hash proves it).
"""

from __future__ import annotations

import contextlib
import random
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

from needle_lib.contract.records import RepoProvenance
from needle_lib.recall.confined import LeftOut, confine
from needle_lib.recall.languages import language_of
from needle_lib.tokens import counted_tokens
from needle_lib.tomlconf import ConfigError, Key

#: The prompt budget when neither a model config (``context_tokens``) nor the model's
#: server says how large its context is: a 32K-token context with room left for the answer.
DEFAULT_PROMPT_TOKENS = 30_720
#: What ``DEFAULT_PROMPT_TOKENS`` is called where a run says which source set the budget.
DEFAULT_SOURCE = "the default for an unknown context (32K)"
#: Tokens a budget keeps for the prompt's task text (which quotes the signature) beyond
#: the corpus, and for the answer when the budget comes from a model's context.
TASK_ROOM = 512
ANSWER_ROOM = 2_048

REPO_SCHEMA = {
    "path": Key((str,), True),
    "include": Key((list,)),
    "exclude": Key((list,)),
    "max_prompt_tokens": Key((int,)),
}


@dataclass(frozen=True)
class RepoSpec:
    """What to read from a checkout. Globs are matched against repo-relative POSIX paths
    with ``fnmatch`` rules (``*`` also crosses ``/``); no include glob means every file."""

    path: Path
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_prompt_tokens: int | None = None
    #: Who set ``max_prompt_tokens`` (``--max-prompt-tokens``, a config file, a server's
    #: reported context), shown to the user and recorded in the dump.
    budget_source: str | None = None


@dataclass(frozen=True)
class KnownContext:
    """A model's context as known before the run, and where that came from."""

    tokens: int
    source: str  # "context_tokens of configs/models/x.toml", "llama.cpp GET /props …"
    #: The model's own maximum rather than what its server loaded: it caps the default
    #: budget (an 8K model cannot read 30K) but does not raise it (a 128K model may be
    #: loaded with 4K).
    ceiling: bool = False


@dataclass(frozen=True)
class RepoSnapshot:
    """The files a repo corpus was built from, and where they came from."""

    root: Path
    commit: str
    dirty: bool
    files: tuple[str, ...]  # repo-relative, in corpus order
    candidates: int  # readable files that matched the globs, before the budget
    budget: int  # prompt tokens the corpus was sized for
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    folder: str = "."  # the named folder, relative to ``root`` ("." for the whole checkout)
    #: Matching files never read: symlinks and paths that leave the checkout.
    left_out: tuple[LeftOut, ...] = ()
    budget_source: str = DEFAULT_SOURCE  # what set ``budget``

    def describe(self) -> RepoProvenance:
        """The dump's provenance of a repo corpus (the file list is the corpus's own)."""
        return {
            "path": str(self.root),
            "folder": self.folder,
            "commit": self.commit,
            "dirty": self.dirty,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "max_prompt_tokens": self.budget,
            "budget_source": self.budget_source,
            "candidates": self.candidates,
            "chosen": len(self.files),
        }


def sized(spec: RepoSpec, contexts: Sequence[KnownContext]) -> RepoSpec:
    """``spec`` with its budget (and the budget's source) settled for a run whose models
    have ``contexts``."""
    tokens, source = prompt_budget(spec, contexts)
    return replace(spec, max_prompt_tokens=tokens, budget_source=source)


def prompt_budget(spec: RepoSpec, contexts: Sequence[KnownContext] = ()) -> tuple[int, str]:
    """(budget, what set it): the spec's own budget, else the smallest known loaded
    context less the answer's room (every model of a run reads the same text), else
    ``DEFAULT_PROMPT_TOKENS`` — lowered to the smallest model maximum below it."""
    if spec.max_prompt_tokens is not None:
        return spec.max_prompt_tokens, spec.budget_source or "max_prompt_tokens"
    loaded = [c for c in contexts if not c.ceiling]
    ceilings = [c for c in contexts if c.ceiling and c.tokens - ANSWER_ROOM < DEFAULT_PROMPT_TOKENS]
    if not loaded and not ceilings:
        return DEFAULT_PROMPT_TOKENS, DEFAULT_SOURCE
    least = min(loaded or ceilings, key=lambda c: c.tokens)
    what = "context" if not least.ceiling else "maximum context"
    return least.tokens - ANSWER_ROOM, (
        f"{least.source}: a {least.tokens:,}-token {what} less {ANSWER_ROOM:,} for the answer"
    )


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        )
    except FileNotFoundError:
        raise ConfigError("--repo needs git on PATH") from None
    except subprocess.CalledProcessError as exc:
        message = exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else exc
        raise ConfigError(f"--repo {root}: not a readable git checkout ({message})") from None
    return done.stdout


def head_commit(root: Path) -> str:
    """The checkout's commit, which a dump records so ``needle rescore`` can rebuild the
    text; a repository with no commit yet has none to record, so it is named as such rather
    than as unreadable."""
    try:
        return _git(root, "rev-parse", "--verify", "HEAD^{commit}").strip()
    except ConfigError:
        if _git(root, "rev-list", "-n", "1", "--all").strip():
            raise
        raise ConfigError(
            f"--repo {root}: the repository has no commit yet; a run records the commit it "
            "read so its dump can be re-scored later: commit once (git add -A && git commit "
            "-m start), then run again"
        ) from None


def checkout_folder(path: Path) -> tuple[Path, str]:
    """(checkout root, ``path`` relative to it as a POSIX path, "." for the root itself)."""
    if not path.is_dir():
        raise ConfigError(f"--repo {path}: no such directory")
    root, prefix = _git(path, "rev-parse", "--show-toplevel", "--show-prefix").split("\n")[:2]
    return Path(root.strip()), prefix.strip().rstrip("/") or "."


def candidate_files(spec: RepoSpec) -> tuple[Path, list[str]]:
    """(checkout root, readable files under the spec's folder matching the globs), sorted."""
    root, folder = checkout_folder(spec.path)
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    names = sorted({name for name in listed.split("\0") if name})
    if folder != ".":
        names = [name for name in names if name.startswith(f"{folder}/")]
    return root, [
        name
        for name in names
        if language_of(name) is not None
        and (not spec.include or any(fnmatchcase(name, g) for g in spec.include))
        and not any(fnmatchcase(name, g) for g in spec.exclude)
        and (root / name).is_file()
    ]


def choose_files(spec: RepoSpec, seed: int) -> tuple[RepoSnapshot, list[str]]:
    """The snapshot and the texts of the files that fit the spec's budget, in path order."""
    budget, source = prompt_budget(spec)
    root, listed = candidate_files(spec)
    names, left_out = confine(root, listed)
    folder = checkout_folder(spec.path)[1]
    texts: dict[str, str] = {}
    for name in names:
        try:
            text = (root / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text a model can be asked to recall
        if text.strip():  # an empty `__init__.py` holds nothing to ask about
            texts[name] = text
    if budget <= TASK_ROOM:
        raise ConfigError(
            f"a prompt budget of {budget:,} tokens ({source}) leaves no room for a corpus "
            f"beside the task's {TASK_ROOM} tokens: load the model with a larger context, or "
            "raise --max-prompt-tokens"
        )
    order = sorted(texts)
    random.Random(seed).shuffle(order)
    room = budget - TASK_ROOM
    chosen: list[str] = []
    for name in order:
        # The file plus its `// ====== path ======` header line; the preamble's opening
        # sentence is within the task room.
        cost = counted_tokens(texts[name]) + counted_tokens(f"// ====== {name} ======\n")
        if cost <= room:
            chosen.append(name)
            room -= cost
    if not chosen:
        smallest = min((counted_tokens(t) for t in texts.values()), default=None)
        found = f"the smallest of {len(texts)} is {smallest:,} tokens" if texts else "none"
        if left_out:
            found += f"; {len(left_out)} left out as symlinks or outside the checkout"
        raise ConfigError(
            f"--repo {spec.path}: no readable source file fits a prompt budget of {budget:,} "
            f"tokens, set by {source} ({found}; supported files are matched by extension and "
            "the include globs); raise it with --max-prompt-tokens N if the model can take it"
        )
    chosen.sort()
    commit = head_commit(root)
    dirty = bool(_git(root, "status", "--porcelain", "--", *chosen).strip())
    snapshot = RepoSnapshot(
        root, commit, dirty, tuple(chosen), len(texts), budget, spec.include, spec.exclude,
        folder, tuple(left_out), source,
    )
    return snapshot, [texts[name] for name in chosen]


def recorded_texts(root: Path, commit: str, files: Sequence[str]) -> dict[str, list[str]]:
    """The texts a dump's ``files`` may have had, by where they were found: ``"checkout"``
    (the working tree now) and ``"commit <hash>"`` (the recorded commit's version of each
    file it has, the working tree's of the rest: untracked files are not in a commit). A
    place that lacks a file is left out; the caller keeps the one whose text hashes to the
    dump's."""
    now: dict[str, str] = {}
    for name in files:
        with contextlib.suppress(OSError, UnicodeDecodeError):  # deleted or made binary
            now[name] = (root / name).read_text(encoding="utf-8")
    committed = dict(now)
    for name in files:
        with contextlib.suppress(ConfigError):  # not in the commit, or the commit is gone
            committed[name] = _git(root, "show", f"{commit}:{name}")
    found: dict[str, list[str]] = {}
    for where, texts in (("checkout", now), (f"commit {commit[:12]}", committed)):
        if all(name in texts for name in files):
            found[where] = [texts[name] for name in files]
    return found
