"""Needle's options coexist with the pytest plugins people really install.

The full set (pytest-timeout, -rerunfailures, -randomly, -cov, -sugar, -json-report,
-benchmark, -env) is installed and run by `.ci/run`; here, with no network, a module named
like pytest-timeout registers its `--timeout` exactly as the real plugin does.
"""

from __future__ import annotations

import json

import pytest
from evalrun import run_evals

#: pytest-timeout's own registration of its option (group and dest as in the plugin).
PYTEST_TIMEOUT = '''
def pytest_addoption(parser):
    group = parser.getgroup("timeout", "Interrupt test run and dump stacks of all threads")
    group.addoption("--timeout", type=float, help="per-test timeout in seconds")
'''


def _request_timeout(results) -> float:
    dump = json.loads((results / "http_server__reference.json").read_text(encoding="utf-8"))
    assert dump["complete"] and len(dump["cases"]) == dump["expected_cases"]
    return dump["model"]["request"]["timeout"]


def test_pytest_timeout_keeps_its_option_and_needle_takes_request_timeout(pytester, tmp_path):
    pytester.makepyfile(pytest_timeout=PYTEST_TIMEOUT)
    result = run_evals(pytester, tmp_path, "-p", "pytest_timeout", "--corpus", "http_server",
                       "--sample", "2", "--timeout", "900", "--request-timeout", "42")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    assert _request_timeout(tmp_path) == 42.0


def test_the_old_timeout_spelling_works_where_nothing_else_owns_it(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, "--corpus", "http_server", "--sample", "2",
                       "--timeout", "17")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    assert _request_timeout(tmp_path) == 17.0
