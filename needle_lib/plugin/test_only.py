"""Plugins of Needle's own test suite, dropped from runs that only run evals.

Hypothesis is a dev dependency (``tests/`` use it), so ``uv run`` installs it and pytest
loads its plugin into every run. At the end of any run that plugin imports all of
Hypothesis (0.5–1 s, a sixth of a 16-case recall run) to report on property tests, which an
eval never has. A run that selects only paths under ``evals/`` unregisters it before it
does anything; a run that selects anything else keeps it.
"""

from __future__ import annotations

import pytest

from needle_lib.plugin.reports import EVALS_DIR
from needle_lib.plugin.session import selected_paths

#: pytest's names for them (``-p no:NAME`` would block them too).
TEST_ONLY_PLUGINS = ("hypothesispytest",)


def evals_only(config: pytest.Config) -> bool:
    paths = selected_paths(config)
    return bool(paths) and all(path.is_relative_to(EVALS_DIR) for path in paths)


def drop_test_only_plugins(config: pytest.Config) -> None:
    if not evals_only(config):
        return
    for name in TEST_ONLY_PLUGINS:
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)
