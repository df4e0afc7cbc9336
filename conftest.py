"""The repository's root conftest: nothing of Needle's is loaded here.

Needle's plugin is loaded by ``evals/conftest.py``, for eval runs only; pytest-asyncio and
Hypothesis, which only Needle's own tests use, by ``tests/conftest.py`` (``addopts``
blocks their entry points, so an eval run never imports them). The ``asyncio_*`` keys of
``[tool.pytest.ini_options]`` are pytest-asyncio's: they are declared here when it is not
loaded, so an eval run, which shares that configuration, accepts them.
"""

from __future__ import annotations

from typing import Literal

import pytest

#: pytest-asyncio's ini keys, as it declares them.
ASYNCIO_INI: dict[str, Literal["string", "bool"]] = {
    "asyncio_mode": "string",
    "asyncio_debug": "bool",
    "asyncio_default_fixture_loop_scope": "string",
    "asyncio_default_test_loop_scope": "string",
}


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if pluginmanager.has_plugin("pytest_asyncio.plugin") or pluginmanager.has_plugin("asyncio"):
        return
    for key, kind in ASYNCIO_INI.items():
        parser.addini(key, "pytest-asyncio's (loaded by tests/conftest.py)", type=kind)
