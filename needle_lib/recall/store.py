"""The recall result store: every run keeps its own dump; one "latest" view per pair.

A run on a (corpus, model) pair writes ``<results>/runs/<pair>/<UTC time>.json`` (``-2``,
``-3``, … for runs started in the same second), a name no other run holds, so a
``--function X`` or ``--sample 3`` run can never replace a complete 16-case dump.
``<results>/<pair>.json`` — the path every dump had before the store — is the *latest
view*: a relative symbolic link to the run file that ``kernel.latest.takes_view`` (the rule
the search history's ``latest/`` follows too) picks: the latest complete run of the pair's
default selection and policy; until one exists, the latest default run, finished or in
progress (so ``needle status`` can offer to resume it), and until then the latest run of
any selection. "Latest" is by start, which the run file's name records. A link, not a
copy: a copy stored every answer twice (an 8 MB answer was 24 MB on disk with the HTML
report) and was rewritten after every case. Readers (``needle status``,
``rescore``, ``compare``, ``dashboard``, gates) read the view, and reading follows the
link, so they pick the right run without knowing the store; where the file system refuses
symlinks (Windows without the privilege) the view is a copy, as before. Dumps written
before the store are views already and load as they are; a run that takes the view's place
moves such a dump into the pair's run folder first, so it is never destroyed.

A dump in progress is rewritten after every case, compact and without an fsync (see
``write_dump``); the run's last write is indented for reading and fsynced.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from needle_lib.contract.records import RecallDump
from needle_lib.jsonio import JSONObject, json_object, read_json, write_json_atomic
from needle_lib.kernel.latest import Standing, takes_view
from needle_lib.names import safe_file_name

RUNS_DIR = "runs"
#: The dump key naming the run file a dump (or a view's copy) was stored as.
STORED_AS: Final = "stored_as"
#: The dump key saying whether the run used its corpus's default selection and policy.
DEFAULT_SELECTION: Final = "default_selection"


def pair_name(corpus: str, model_key: str) -> str:
    """A (corpus, model) pair's name in the store, ``<corpus>__<model key>``: the one
    spelling a run files its dumps under and every reader (``needle status``) looks for,
    file-name safe whatever the corpus file or model id is called."""
    return f"{safe_file_name(corpus)}__{safe_file_name(model_key)}"


@dataclass(frozen=True)
class ResultStore:
    """The store under ``root`` (``--results-dir``, default ``results/``)."""

    root: Path

    def latest_path(self, pair: str) -> Path:
        """The pair's latest view (also where dumps lived before the store)."""
        return self.root / f"{pair}.json"

    def run_dir(self, pair: str) -> Path:
        return self.root / RUNS_DIR / pair

    def new_run(self, pair: str, started: datetime | None = None) -> Path:
        """A fresh run file for ``pair``, created empty so no concurrent run can take it."""
        stamp = (started or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        directory = self.run_dir(pair)
        directory.mkdir(parents=True, exist_ok=True)
        for number in range(1, 10_000):
            path = directory / (f"{stamp}.json" if number == 1 else f"{stamp}-{number}.json")
            try:
                path.open("x").close()
            except FileExistsError:
                continue
            return path
        raise OSError(f"{directory}: no free run name for {stamp}")

    def runs(self, pair: str) -> list[Path]:
        """The pair's dumps, newest first: its run files, then the view when it is not a
        copy of one of them (a dump from before the store)."""
        directory = self.run_dir(pair)
        found = (
            sorted(directory.glob("*.json"), key=_run_order, reverse=True)
            if directory.is_dir()
            else []
        )
        view = self.latest_path(pair)
        if view.is_file() and _stored_as(view) is None:
            found.append(view)
        return found

    def save(self, pair: str, run: Path, dump: RecallDump) -> None:
        """Write ``dump`` to its run file, and point the pair's view at it unless the view
        holds a better run (``kernel.latest.takes_view``: a default run beats any other, a
        complete one an incomplete one, among equals the one started last; so a
        ``--sample 3`` run fills an empty view, but never replaces a default run)."""
        stored = dump.copy()
        stored[STORED_AS] = self._relative(run)
        write_dump(run, stored)
        view = self.latest_path(pair)
        with self._locked(pair):
            current = _read(view)
            if current is not None and current.get(STORED_AS) == stored[STORED_AS] \
                    and view.is_symlink():
                return  # the view is a link to this run file already
            if (
                current is None
                or current.get(STORED_AS) == stored[STORED_AS]
                or takes_view(_standing(stored), _standing(current))
            ):
                if current is not None and current.get(STORED_AS) is None \
                        and not view.is_symlink():
                    self._keep_older(pair, view)
                _point(view, run, stored)

    def _keep_older(self, pair: str, view: Path) -> None:
        """Move a dump from before the store out of the view's path into the pair's run
        folder (named by its modification time), so the view can become a link."""
        started = datetime.fromtimestamp(view.stat().st_mtime, UTC)
        os.replace(view, self.new_run(pair, started))

    def _relative(self, run: Path) -> str:
        try:
            return str(run.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(run)

    @contextlib.contextmanager
    def _locked(self, pair: str) -> Iterator[None]:
        """Serialise view updates of one pair across processes (two runs at once)."""
        lock = self.run_dir(pair) / ".lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with lock.open("a") as handle:
            if os.name == "posix":
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX)
            yield


def _point(view: Path, run: Path, dump: RecallDump) -> None:
    """Make ``view`` a relative link to ``run`` (swapped in atomically: a reader sees the
    old view or the new one); a copy of ``dump`` where symlinks are refused."""
    link = view.with_name(f".{view.name}.{os.getpid()}.link")
    link.unlink(missing_ok=True)
    try:
        os.symlink(os.path.relpath(run, view.parent), link)
    except (OSError, NotImplementedError):
        write_dump(view, dump)
        return
    os.replace(link, view)


def write_dump(path: Path, dump: RecallDump) -> None:
    """Write a recall dump as its state calls for. In progress, it is rewritten after
    every case: json's C encoder (indenting switches to the pure-Python one) and no fsync
    (a killed run keeps its last rewrite whole; the final write is durable). Finished, it
    is indented for reading and diffing, and fsynced."""
    in_progress = bool(dump.get("in_progress"))
    write_json_atomic(path, dump, indent=None if in_progress else 1, durable=not in_progress)


def _standing(dump: RecallDump | JSONObject) -> Standing:
    """How a dump stands for its pair. A run in the store is whole: a shard's part goes to
    its own file under ``parts/`` (``--shard-by case``), never through the store. A dump from
    before the store counts as default (that is what it replaces otherwise) and as older
    than any run file: it has no start of its own."""
    stored = dump.get(STORED_AS)
    started = _run_order(Path(stored)) if isinstance(stored, str) else ("", 0)
    return Standing(whole=True, full_selection=bool(dump.get(DEFAULT_SELECTION, True)),
                    complete=bool(dump.get("complete")),
                    started=f"{started[0]}.{started[1]:06d}" if started[0] else "")


def _run_order(path: Path) -> tuple[str, int]:
    """``YYYYMMDD-HHMMSS[-N]``: by start time, then by number within the second."""
    day, _, rest = path.stem.partition("-")
    clock, _, number = rest.partition("-")
    return day + clock, int(number) if number.isdigit() else 1


def _read(path: Path) -> JSONObject | None:
    """The JSON object in ``path`` as it stands (a view a concurrent run may be writing, or
    a dump from before the store), unchecked: only its ``stored_as`` and rank are read."""
    try:
        return json_object(read_json(path))
    except (OSError, ValueError):
        return None


def _stored_as(path: Path) -> str | None:
    data = _read(path)
    stored = data.get(STORED_AS) if data else None
    return stored if isinstance(stored, str) else None
