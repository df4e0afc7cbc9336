"""`needle engines --check` against loopback engines: one line per engine, exit 1 on failure."""

from __future__ import annotations

import re

import pytest

from needle_lib.cli import main
from needle_lib.search import known_engines
from needle_lib.search.check import check_engines
from needle_lib.testing.search_server import FakeSearchServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeSearchServer() as fake:
        for key, value in fake.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("SERPER_API_KEY", raising=False)
        yield fake


def _lines(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines()}


def test_check_reports_status_latency_count_and_first_url(
    server: FakeSearchServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["engines", "--check", "--engines", "exa,searxng,brave,google"])
    out = capsys.readouterr().out
    assert code == 0
    lines = _lines(out)
    for engine in ("exa", "searxng", "brave"):
        assert re.match(rf"{engine}\s+ok\s+\d+ ms  3 results  https://www\.example\d\.com/",
                        lines[engine]), lines[engine]
    assert re.match(r"google\s+skipped set SERPER_API_KEY to check it", lines["google"])
    assert out.rstrip().endswith("3 ok, 0 failed, 1 skipped (query 'python programming language')")
    assert server.requests["exa"] == server.requests["searxng"] == server.requests["brave"] == 1


def test_a_failing_engine_prints_its_error_and_exits_non_zero(
    server: FakeSearchServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXA_API_KEY", "wrong-SECRET-key")
    code = main(["engines", "--check", "--engines", "exa,searxng", "--query", "gpu prices"])
    out = capsys.readouterr().out
    assert code == 1
    lines = _lines(out)
    assert re.match(r"exa\s+failed\s+exa: HTTP 401: invalid api key$", lines["exa"])
    assert "ok" in lines["searxng"]
    assert "wrong-SECRET-key" not in out
    assert out.rstrip().endswith("1 ok, 1 failed, 0 skipped (query 'gpu prices')")


async def test_unreachable_engine_is_one_line_after_its_retries(server: FakeSearchServer) -> None:
    delays: list[float] = []

    async def no_sleep(delay: float) -> None:
        delays.append(delay)

    env = {**server.env(), "NEEDLE_BRAVE_BASE_URL": "http://127.0.0.1:9"}  # nothing listens
    (check,) = await check_engines(["brave"], engines=known_engines(), env=env, sleep=no_sleep)
    assert check.status == "failed"
    assert check.detail == ("brave: connection error (ConnectError); gave up after 3 attempts")
    assert delays == [1.0, 2.0]
    assert "\n" not in check.line(8)


def test_unknown_engine_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["engines", "--check", "--engines", "exa,altavista"]) == 2
    assert "unknown engine(s) altavista; known: keenable" in capsys.readouterr().err
