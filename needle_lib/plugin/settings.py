"""What every process of a run knows about it, kept in ``config.stash``: the run's
``RunSettings`` (built once at configure, read by everything else), the shared run
directory and its state, the colour decision, and where results go.

Why one place: the options used to be read by name wherever they were needed (51
``getoption`` calls in 12 files); now a renamed option is a type error here, and the
planners under the plugin take a ``RunSettings`` instead of pytest's config.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol

import pytest

from needle_lib.argtypes import Shard
from needle_lib.console import want_color
from needle_lib.kernel.runstate import RunState
from needle_lib.options import RunSettings
from needle_lib.paths import RESULTS_DIR
from needle_lib.recall.store import ResultStore

#: xdist: the keys of what the controller hands each worker (``workerinput``).
RUN_DIR_KEY = "needle_run_dir"
COLOR_KEY = "needle_color"
PARTS_DIR = "parts"

class WorkerNode(Protocol):
    """What the plugin uses of an xdist worker node (``pytest_configure_node``)."""

    workerinput: dict[str, object]
    config: pytest.Config


settings_key = pytest.StashKey[RunSettings]()
state_key = pytest.StashKey[RunState]()
color_key = pytest.StashKey[bool]()


def store_settings(config: pytest.Config) -> RunSettings:
    """Build the run's settings from the parsed command line (at configure, once)."""
    built = config.stash[settings_key] = RunSettings.from_namespace(config.option)
    return built


def settings(config: pytest.Config) -> RunSettings:
    return config.stash[settings_key]


def run_state(config: pytest.Config) -> RunState:
    return config.stash[state_key]


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (which never writes a result file)."""
    return hasattr(config, "workerinput")


def results_dir(config: pytest.Config) -> Path:
    value = settings(config).results_dir
    return Path(value) if value else RESULTS_DIR


def result_store(config: pytest.Config) -> ResultStore:
    return ResultStore(results_dir(config))


def part_path(results: Path, pair: str, shard: Shard) -> Path:
    return results / PARTS_DIR / f"{pair}.shard-{shard.index}-of-{shard.count}.json"


def dump_path(config: pytest.Config, pair: str) -> Path | None:
    """The one file a run's dump of ``pair`` must go to: ``--dump`` when given (a single
    (corpus, model) run), or a part under ``<results>/parts/`` when ``--shard-by case``
    splits the pair; None when the result store chooses (a new run file per run)."""
    run = settings(config)
    if run.dump:
        return Path(run.dump)
    if run.writes_parts and run.shard is not None:
        return part_path(results_dir(config), pair, run.shard)
    return None


def decide_color(config: pytest.Config) -> bool:
    """The controller decides once (its stdout is the user's terminal) and tells workers."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get(COLOR_KEY, False))
    run = settings(config)
    flag = None
    if run.no_color:
        flag = False
    elif run.color in ("yes", "no"):
        flag = run.color == "yes"
    return want_color(sys.stdout, flag)


def use_color(config: pytest.Config) -> bool:
    if color_key not in config.stash:
        config.stash[color_key] = decide_color(config)
    return config.stash[color_key]
