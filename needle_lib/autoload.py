"""A pytest plugin: the entry-point plugins an eval run does not load, decided before
pytest loads them. It lives outside ``needle_lib.plugin``, which must not be imported this
early (pytest rewrites its assertions when the root conftest names it).

pytest-asyncio and Hypothesis are dev dependencies for Needle's own tests, so ``uv run``
installs them and pytest loads their plugins into every process. An eval has no async
test and no property test, yet pytest-asyncio with asyncio costs a recall run ~0.1 s of CPU
(its import, and its hooks over every collected case), a tenth of a 16-case run. This
module is named in ``addopts`` (``-p needle_lib.autoload``), so pytest registers it
before it loads the entry points; when the command line selects only paths under
``evals/``, it blocks those plugins as ``-p no:NAME`` would. pytest-asyncio's ini keys (the
ini file sets ``asyncio_mode``) are declared in its place, so the ini file stays valid.

pytest has parsed only its own options at that point, so the value of one of Needle's
(``--results-dir results``) still sits among the paths the command line selects. The run
counts as an eval run when the words that name existing paths all lie under ``evals/``,
and at least one does; when one lies elsewhere, the values of Needle's options that take
one (``needle_lib.options``, read only then) are set aside and the rest looked at again.
A path under ``tests/`` always loads the plugins, as does a value of another plugin's
option that names a path elsewhere (``--html other/report.html``): those plugins are not
loaded yet either. ``needle_lib.plugin.lean`` decides the same from the parsed command
line, for what can wait until configure.
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from needle_lib.paths import only_evals

#: Entry-point names (as ``-p no:NAME`` spells them) an eval run does not load.
NOT_FOR_EVALS = ("asyncio", "hypothesispytest")
#: pytest-asyncio's ini keys: declared when it is blocked, so an ini file setting them
#: stays valid.
ASYNCIO_INI: dict[str, Literal["string", "bool"]] = {
    "asyncio_mode": "string",
    "asyncio_debug": "bool",
    "asyncio_default_fixture_loop_scope": "string",
    "asyncio_default_test_loop_scope": "string",
}


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    config = pluginmanager.get_plugin("pytestconfig")
    if not isinstance(config, pytest.Config) or not selects_only_evals(config):
        return
    for name in NOT_FOR_EVALS:
        pluginmanager.consider_pluginarg(f"no:{name}")
    for key, kind in ASYNCIO_INI.items():
        parser.addini(key, "pytest-asyncio's, not loaded by an eval run", type=kind)


def selects_only_evals(config: pytest.Config) -> bool:
    """Whether the words of the command line that name existing paths (``path::test`` →
    ``path``), values of Needle's options aside, all lie under ``evals/``, and at least one
    does."""
    namespace = getattr(config, "known_args_namespace", None)
    words = list(getattr(namespace, "file_or_dir", None) or [])
    paths = _existing_paths(config, words)
    if paths and not only_evals(paths):  # perhaps only an option's value: look again
        for value in _needle_option_values(config):
            if value in words:
                words.remove(value)
        paths = _existing_paths(config, words)
    return only_evals(paths)


def _existing_paths(config: pytest.Config, words: list[str]) -> list[Path]:
    here = Path(config.invocation_params.dir)
    paths = [here / word.split("::")[0] for word in words]
    return [path.resolve() for path in paths if path.exists()]


def _needle_option_values(config: pytest.Config) -> Iterator[str]:
    """The words that follow Needle's options taking a value, in each of the places pytest
    reads command-line words from (``--name=value`` is never taken for a path)."""
    from needle_lib.options import value_options  # only when a word may be a value

    takes_value = value_options()
    sources = (
        config.getini("addopts"),
        shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        config.invocation_params.args,
    )
    for words in sources:
        for word, following in itertools.pairwise(words):
            if word == "--":  # what follows is positional
                break
            if word in takes_value:
                yield following
