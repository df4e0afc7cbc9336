"""Shared test setup: pytester for end-to-end runs of ``pytest evals``, a hermetic
environment and a pinned clock.

The suite must give the same verdicts on every machine: a developer's ``.env`` (which the
README recommends for keys) and exported ``NEEDLE_*`` settings would otherwise flow into
every test and every ``pytest evals`` subprocess a test starts, turning "no key → skipped"
into a real request or pointing a client at the developer's server. So, before the plugin
configures anything, the variables Needle reads are removed and ``.env`` loading is off;
tests that need a variable set it themselves (``monkeypatch.setenv``).

Generation seeds from the UTC hour and dates its windows from today, so a test that ran a
generate command on the real clock drew a different sample every hour (and failed in some).
Every test runs as of ``PINNED_NOW`` (``NEEDLE_NOW``, inherited by subprocesses); a test
about another moment sets its own. ``.ci/run`` runs the clock-sensitive tests under
libfaketime at several hours and dates to keep it so.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import pkgutil
import re
from collections.abc import Iterator
from datetime import datetime

import pytest
from fakeclock import PINNED_NOW
from hypothesis import HealthCheck, settings
from tiers import audit_fast_test, mark_tiers

import needle_lib
from needle_lib.clock import NOW_ENV
from needle_lib.llm.config import NO_DOTENV_ENV
from needle_lib.search.registry import ENGINES

pytest_plugins = ["pytester"]

#: Plugins only Needle's own tests use: ``addopts`` blocks their entry points so that an
#: eval run never imports them, and this conftest, loaded by every run of tests/, loads
#: them (async tests run in ``asyncio_mode = "auto"``; property tests use Hypothesis's).
TEST_ONLY_PLUGINS = ("pytest_asyncio.plugin", "_hypothesis_pytestplugin")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Called as this conftest registers, before the command line is parsed, so the
    plugins' options and ini keys are known. One already loaded (``-p asyncio`` lifts the
    block) is left as it is."""
    for name in TEST_ONLY_PLUGINS:
        module = importlib.import_module(name)
        if not pluginmanager.is_registered(module):
            pluginmanager.register(module, name)

# Property tests check values, not speed: on a loaded CI machine Hypothesis's per-example
# deadline and its "input generation is slow" health check fail tests whose code is right.
settings.register_profile("needle", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
# A gating run must not turn red on a draw nobody made before: CI derandomizes (the same
# examples every run, no example database), so a landing is judged on the code, not on luck.
# Random exploration, which found the ``%0B`` URL bug, stays the default on a developer's
# machine; ``HYPOTHESIS_PROFILE`` picks either explicitly.
settings.register_profile("ci", parent=settings.get_profile("needle"), derandomize=True,
                          database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "needle"))

#: What Needle reads from the environment: its own settings, API keys and tokens, and the
#: engines' mode switches (``TAVILY_DEPTH``).
NEEDLE_READS = re.compile(r"NEEDLE_\w+|\w+_API_(KEY|TOKEN)")
ENGINE_MODES = {spec.mode_env for spec in ENGINES.values() if spec.mode_env}


@functools.cache
def import_every_needle_module() -> None:
    for module in pkgutil.walk_packages(needle_lib.__path__, "needle_lib."):
        with contextlib.suppress(ImportError):  # an optional extra that is not installed
            importlib.import_module(module.name)


#: Kept: it picks the model of the real-model tier (``testing.real_model``), the one thing
#: a developer points at their own hardware, and no other test reads it.
KEPT = {"NEEDLE_REAL_GGUF"}


def hermetic_environment(environ: os._Environ[str]) -> None:
    for name in [n for n in environ
                 if (NEEDLE_READS.fullmatch(n) or n in ENGINE_MODES) and n not in KEPT]:
        del environ[name]
    environ[NO_DOTENV_ENV] = "1"


hermetic_environment(os.environ)


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> datetime:
    monkeypatch.setenv(NOW_ENV, PINNED_NOW.isoformat())
    return PINNED_NOW


#: Why a real-model test did not run in a command that did not ask for the tier.
REAL_TIER_SKIP = ("the real-model tier (minutes of CPU inference) runs only when asked: "
                  "uv sync --extra real, then uv run pytest -m real")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_tiers(items, slow_first=hasattr(config, "workerinput"))  # an xdist worker
    if "real" not in (config.option.markexpr or ""):
        for item in items:
            if item.get_closest_marker("real"):
                item.add_marker(pytest.mark.skip(reason=REAL_TIER_SKIP))


@pytest.fixture(autouse=True)
def fast_tier_audit(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("slow"):
        yield
    else:
        with audit_fast_test():
            yield


@pytest.fixture(autouse=True)
def needle_modules_before_pytester(request: pytest.FixtureRequest) -> None:
    """pytester puts ``sys.modules`` back as it found it when its test ends, so a Needle
    module that such a test imported first (an in-process ``needle merge``) is dropped
    while modules imported earlier still hold its classes; the next import makes new ones
    and an ``isinstance`` across the two fails in whatever test runs next in that worker.
    Importing every module before pytester takes its snapshot keeps one copy of each.
    (Autouse fixtures are set up before the ones a test names.)"""
    if "pytester" in request.fixturenames:
        import_every_needle_module()
