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

Options are not parsed yet at that point, so an option's value cannot be told from a path:
the run counts as an eval run when the words of the command line that name existing
paths all lie under ``evals/``, and at least one does. A value that names a path elsewhere
(``--results-dir results``) only makes the run load the plugins as before; a path under
``tests/`` always does. ``needle_lib.plugin.lean`` decides the same from the parsed
command line, for what can wait until configure.
"""

from __future__ import annotations

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
    ``path``) all lie under ``evals/``, and at least one does."""
    namespace = getattr(config, "known_args_namespace", None)
    words = getattr(namespace, "file_or_dir", None) or []
    here = Path(config.invocation_params.dir)
    paths = [here / word.split("::")[0] for word in words]
    return only_evals([path.resolve() for path in paths if path.exists()])
