"""Test tiers, decided from what a test's code reaches, not marked by hand.

A test is ``slow`` when it starts a subprocess (``pytest evals``, ``needle``, git, a
browser), a loopback server thread, or runs pytester; ``browser`` when it drives Chromium.
``pytest -m "not slow"`` is then the inner loop. The rule follows pytest's own
``testing/conftest.py``: look at the names a test function (and the fixtures and helpers it
uses, defined in ``tests/`` or ``needle_lib.testing``) refers to, because a marker set by
hand is forgotten the day someone adds a server to a fast test.

``audit_fast_test`` checks the rule from the other side, in every run: a test left fast
that starts a subprocess or a server while it runs fails, naming what it started, so the
inner loop cannot quietly grow slow.
"""

from __future__ import annotations

import importlib
import inspect
import socketserver
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest

#: Fixtures that start a process or a server by themselves.
SLOW_FIXTURES = frozenset({"pytester", "testdir"})
#: Method names that start a ``pytest`` process or run one in this process.
SLOW_ATTRIBUTES = frozenset({"runpytest_subprocess", "runpytest", "runpytest_inprocess",
                             "inline_run", "spawn_pytest", "popen"})
#: Helpers in ``tests/browser.py``: calling one of them starts Chromium.
BROWSER_MODULE = "browser"
#: Where a helper may live for its code to be read too (library code is not followed: it
#: would make every test that imports the CLI look slow).
FOLLOWED_MODULES = ("needle_lib.testing",)


def _is_followed(module: str) -> bool:
    if module == __name__:  # the audit below patches subprocess; it starts nothing
        return False
    return module.startswith(FOLLOWED_MODULES) or module in _test_modules()


@cache
def _test_modules() -> frozenset[str]:
    """Modules imported from ``tests/`` (test files and their helpers)."""
    here = __file__.rsplit("/", 1)[0] + "/"
    return frozenset(name for name, mod in list(sys.modules.items())
                     if (getattr(mod, "__file__", None) or "").startswith(here))


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _starts_server(cls: type) -> bool:
    return issubclass(cls, socketserver.BaseServer) or any(
        issubclass(cls, server) for server in _server_classes())


@cache
def _server_classes() -> tuple[type, ...]:
    from needle_lib.testing.loopback import LoopbackServer

    return (LoopbackServer,)


def _function(obj: Any) -> Callable[..., Any] | None:
    target = getattr(obj, "__wrapped__", obj)  # a fixture definition wraps its function
    return target if inspect.isfunction(target) else None


_visiting: set[Callable[..., Any]] = set()


@cache
def reaches(func: Callable[..., Any]) -> frozenset[str]:
    """What ``func`` reaches: ``subprocess``, ``server``, ``pytester``, ``browser``."""
    if func in _visiting:  # helpers that call each other: the outer call collects both
        return frozenset()
    _visiting.add(func)
    try:
        return frozenset(_reached_by(func))
    finally:
        _visiting.discard(func)


def _reached_by(func: Callable[..., Any]) -> set[str]:
    found: set[str] = set()
    if (getattr(func, "__module__", "") or "").rsplit(".", 1)[-1] == BROWSER_MODULE:
        found.add("browser")
    names = {name for code in _codes(func.__code__) for name in code.co_names}
    namespace = dict(getattr(func, "__globals__", {}))
    # a local ``import subprocess`` or ``from needle_lib.testing.x import Server``: the module
    # is named in the code, so it is looked up too
    for name in names:
        if name.startswith(FOLLOWED_MODULES):
            importlib.import_module(name)
        if name in sys.modules:
            namespace[name] = sys.modules[name]
    # ``evalrun.run_evals``: names are looked up in the helper modules the function names too
    spaces = [namespace] + [vars(obj) for obj in map(namespace.get, names)
                            if isinstance(obj, types.ModuleType) and _is_followed(obj.__name__)]
    if names & SLOW_ATTRIBUTES:
        found.add("pytester")
    for name in names:
        for space in spaces:
            found |= _reaches_name(space.get(name))
    return found


def _reaches_name(obj: Any) -> set[str]:
    if obj is subprocess or obj in (subprocess.run, subprocess.Popen, subprocess.check_output,
                                    subprocess.check_call, subprocess.call):
        return {"subprocess"}
    if isinstance(obj, type):
        if _starts_server(obj):
            return {"server"}
        if _is_followed(obj.__module__):
            return set().union(*(reaches(f) for f in vars(obj).values()
                                 if inspect.isfunction(f)))
        return set()
    if isinstance(obj, types.ModuleType):
        return {"browser"} if obj.__name__ == BROWSER_MODULE else set()
    func = _function(obj)
    if func is not None and _is_followed(func.__module__):
        return set(reaches(func))
    return set()


@cache
def _conftest_namespaces() -> list[dict[str, Any]]:
    """Every conftest's namespace (all are loaded once collection has run)."""
    return [vars(mod) for name, mod in list(sys.modules.items())
            if name.rsplit(".", 1)[-1] == "conftest"]


def _fixture_functions(item: pytest.Function) -> Iterator[Callable[..., Any]]:
    """The functions of the fixtures ``item`` uses that are defined in its module or in a
    conftest it sees (looked up by name: pytest gives no public way to a fixture's code)."""
    namespaces = [vars(item.module), *_conftest_namespaces()]
    for fixture in item.fixturenames:
        for namespace in namespaces:
            func = _function(namespace.get(fixture))
            if func is not None:
                yield func
                break


def classify(item: pytest.Item) -> frozenset[str]:
    """Why ``item`` is slow (empty when it is fast)."""
    if not isinstance(item, pytest.Function):
        return frozenset()
    why: set[str] = set(SLOW_FIXTURES.intersection(item.fixturenames))
    why |= reaches(item.function)
    for func in _fixture_functions(item):
        why |= reaches(func)
    return frozenset(why)


def mark_tiers(items: list[pytest.Item], *, slow_first: bool = False) -> None:
    """Mark slow and browser tests and order the tiers: fast → slow in one process, so
    ``-x`` stops early on a broken unit; slow → fast under xdist, so the long end-to-end
    tests start first and the many short ones fill the workers' gaps at the end (a long
    test started last decides the run's wall time)."""
    fast, slow = [], []
    for item in items:
        why = classify(item)
        if why:
            item.add_marker(pytest.mark.slow)
            if "browser" in why:
                item.add_marker(pytest.mark.browser)
        (slow if why else fast).append(item)
    items[:] = slow + fast if slow_first else fast + slow


@contextmanager
def audit_fast_test() -> Iterator[None]:
    """Fail a test classified fast that starts a subprocess or a listening server."""
    started: list[str] = []
    popen_init = subprocess.Popen.__init__
    activate = socketserver.TCPServer.server_activate

    def watched_popen(self: subprocess.Popen[Any], args: Any, *a: Any, **kw: Any) -> None:
        started.append(f"a subprocess {args!r:.120}")
        popen_init(self, args, *a, **kw)

    def watched_activate(self: socketserver.TCPServer) -> None:
        started.append(f"a server ({type(self).__name__})")
        activate(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "__init__", watched_popen)
        patch.setattr(socketserver.TCPServer, "server_activate", watched_activate)
        yield
    if started:
        pytest.fail(f"this test is in the fast tier but started {'; '.join(started)}: "
                    "tests/tiers.py should see what starts it (mark the helper, not the test)",
                    pytrace=False)
