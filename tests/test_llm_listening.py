"""A local server that refuses connections stops a run up front, naming --base-url."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from evalrun import assert_usage_error, run_evals

from needle_lib.llm import resolve_model
from needle_lib.llm.listening import not_listening, refuses


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def open_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_only_a_refusing_loopback_port_counts(closed_port: int, open_port: int) -> None:
    assert refuses(f"http://127.0.0.1:{closed_port}")
    assert refuses(f"http://localhost:{closed_port}/v1")
    assert not refuses(f"http://127.0.0.1:{open_port}")
    assert not refuses("https://api.example.invalid")  # remote: the preflight's to judge


def test_the_message_names_the_default_or_the_flag() -> None:
    default = not_listening(resolve_model("some-local-model"), flag_given=False)
    assert "nothing listens at http://localhost:1234 (the default base URL: LM Studio's" in default
    assert "--base-url URL" in default
    flagged = not_listening(resolve_model("m", {"base_url": "http://127.0.0.1:9"}), True)
    assert "nothing listens at --base-url http://127.0.0.1:9: connection refused" in flagged


def test_a_refused_server_is_one_usage_error_with_no_dump(
    pytester: pytest.Pytester, tmp_path, closed_port: int
) -> None:
    results = tmp_path / "results"
    result = run_evals(pytester, results, "--model", "some-local-model", "--corpus",
                       "http_server", "--base-url", f"http://127.0.0.1:{closed_port}")
    assert_usage_error(result, f"model some-local-model: nothing listens at --base-url "
                               f"http://127.0.0.1:{closed_port}: connection refused*--base-url*")
    assert not list(results.rglob("*.json"))  # no INVALID dump per pair
    assert "preflight" not in result.stdout.str() + result.stderr.str()
