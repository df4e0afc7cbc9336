"""The suite is hermetic: a developer's ``.env`` and shell settings never reach a test."""

from __future__ import annotations

import os

from evalrun import assert_usage_error, run_evals

from needle_lib.llm.config import NO_DOTENV_ENV, load_dotenv_once
from needle_lib.testing.search_server import FakeSearchServer


def test_an_eval_subprocess_ignores_the_dotenv_in_its_directory(pytester, tmp_path,
                                                                  monkeypatch):
    """A ``.env`` holding a key and a base URL (as the README suggests) must not turn the
    keyless engine's skip into a real request."""
    with FakeSearchServer() as server:
        exa = {k: v for k, v in server.env().items() if "EXA" in k}
        (pytester.path / ".env").write_text("".join(f"{k}={v}\n" for k, v in exa.items()))
        queries = tmp_path / "q.txt"
        queries.write_text("one query\n")
        result = run_evals(pytester, tmp_path, "--queries", str(queries), "--engines", "exa",
                           module="test_news.py")
    assert server.requests["exa"] == 0, result.stdout.str()
    assert_usage_error(result, "--engines: exa needs EXA_API_KEY*")


def test_the_default_dotenv_files_are_off_under_the_switch(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("NEEDLE_HERMETIC_PROBE=from-dotenv\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NEEDLE_HERMETIC_PROBE", raising=False)
    assert os.environ[NO_DOTENV_ENV] == "1"  # set by tests/conftest.py
    load_dotenv_once()
    assert "NEEDLE_HERMETIC_PROBE" not in os.environ
    monkeypatch.delenv(NO_DOTENV_ENV)
    load_dotenv_once()  # the same call without the switch reads ./.env, as users rely on
    assert os.environ.pop("NEEDLE_HERMETIC_PROBE") == "from-dotenv"
