"""The real-model tier (issue 35): Needle end to end against a real model on the CPU —
SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server (the ``real``
extra; ``needle_lib.testing.real_model``).

Skipped unless asked for (``uv run pytest -m real``; ``.ci/run`` has a stage for it), and
skipped saying how to install the extra when it is missing. Every request goes through a
recording proxy on loopback, so what Needle wrote can be compared with what the server
said. Prompts are kept small (CPU inference on a shared machine), timeouts generous, and
decoding greedy (temperature 0, fixed seed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalrun import run_evals

from needle_lib.contract.outcome import SCORED, Outcome
from needle_lib.paths import REPO_ROOT
from needle_lib.testing.loopback import LoopbackServer, Response
from needle_lib.testing.search_server import FakeSearchServer
from needle_lib.tomlconf import ConfigError

try:
    from needle_lib.testing.real_model import REAL_CONTEXT, RealModelServer, model_path

    model_path()
except ConfigError as missing:
    pytest.skip(str(missing), allow_module_level=True)

pytestmark = pytest.mark.real

#: Real code, sized well inside the 8K context (CPU time is the cost: the prompt is read
#: once, and each case reuses it as the server's cached prefix): Needle's own judge.
CODE = REPO_ROOT / "needle_lib" / "judge"
PROMPT_TOKENS = "1200"
CASES = "2"
#: A five-line window: a short answer, which a rambling model's is cut to (and scored).
RECALL_LINES = "5"
RECALL_MAX_TOKENS = 96
#: A verdict is about 150 tokens (its reasoning capped by ``judge.schemas``).
JUDGE_MAX_TOKENS = 320
#: Seconds one request may take on a loaded 2-core machine (one CPU slot, requests queue).
TIMEOUT_S = 1800.0


class RecordingProxy(LoopbackServer):
    """Forwards every request to the real server and keeps (request, answer) pairs."""

    def __init__(self, upstream: str, model: str) -> None:
        self.upstream = upstream
        self.model = model  # the id the real server serves
        self.exchanges: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._http = httpx.Client(timeout=TIMEOUT_S)
        super().__init__()

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Response:
        answer = self._http.request(method, self.upstream + path, content=body,
                                    headers={"Content-Type": "application/json"})
        if path.endswith("/chat/completions") and answer.is_success:
            self.exchanges.append((json.loads(body), answer.json()))
        return answer.status_code, "application/json", answer.content

    def completions(self) -> list[dict[str, Any]]:
        return [answer for _, answer in self.exchanges]


@pytest.fixture(scope="module")
def real_server() -> Any:
    with RealModelServer() as server:
        yield server


@pytest.fixture
def proxy(real_server: RealModelServer) -> Any:
    with RecordingProxy(real_server.url, real_server.model) as recording:
        yield recording


def model_config(directory: Path, proxy: RecordingProxy, max_tokens: int) -> Path:
    """A model config naming the real model behind the proxy."""
    path = directory / f"{proxy.model}.toml"
    path.write_text(f'name = "{proxy.model}"\nbase_url = "{proxy.url}"\n'
                    'api_key = "not-needed"\n'
                    f"context_tokens = {REAL_CONTEXT}\nmax_tokens = {max_tokens}\n"
                    f"timeout = {TIMEOUT_S}\n", encoding="utf-8")
    return path


def recall_dump(results: Path) -> dict[str, Any]:
    (path,) = [p for p in results.glob("*.json") if "__" in p.name]
    return json.loads(path.read_text())


def test_recall_on_real_code_answers_every_case_with_the_servers_counts_and_repeats(
        pytester: pytest.Pytester, tmp_path: Path, proxy: RecordingProxy) -> None:
    config = model_config(tmp_path, proxy, RECALL_MAX_TOKENS)
    args = ("--repo", str(CODE), "--max-prompt-tokens", PROMPT_TOKENS, "--sample", CASES,
            "--primary-lines", RECALL_LINES, "--model", str(config))
    first = run_evals(pytester, tmp_path / "r1", *args)
    assert first.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), first.stdout.str()
    dump = recall_dump(tmp_path / "r1")
    cases = dump["cases"]
    # as many cases as the sized corpus holds functions for (one or two), all answered
    assert 1 <= len(cases) <= int(CASES) and dump["complete"] and dump["valid"]
    assert {case["outcome"] for case in cases} <= SCORED  # answered: no ERROR
    answered = {answer["choices"][0]["message"]["content"]: answer["usage"]
                for answer in proxy.completions()}
    for case in cases:
        # the dump's token counts are the server's own (its tokenizer, its chat template)
        assert case["usage"] == answered[case["response"]], case["case_id"]
        assert case["served_model"] == proxy.model
    assert all(0 < c["usage"]["prompt_tokens"] < REAL_CONTEXT for c in cases)

    # at temperature 0 (greedy decoding, one slot) a second run gives the same answers
    second = run_evals(pytester, tmp_path / "r2", *args)
    assert second.ret == first.ret
    again = {c["case_id"]: c["response"] for c in recall_dump(tmp_path / "r2")["cases"]}
    assert again == {c["case_id"]: c["response"] for c in cases}


def test_a_corpus_larger_than_the_context_is_one_error_naming_it(
        pytester: pytest.Pytester, tmp_path: Path, proxy: RecordingProxy) -> None:
    config = model_config(tmp_path, proxy, RECALL_MAX_TOKENS)
    result = run_evals(pytester, tmp_path / "r", "--corpus", "http_server",
                       "--model", str(config))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    cases = recall_dump(tmp_path / "r")["cases"]
    errors = [c for c in cases if c["outcome"] == Outcome.ERROR]
    assert len(errors) == 1 and f"server limit {REAL_CONTEXT} tokens" in errors[0]["error"]
    assert all(c["outcome"] == Outcome.SKIPPED for c in cases if c not in errors)
    assert proxy.exchanges == []  # the server refused the prompt: nothing was generated


def test_a_news_run_with_the_real_model_as_judge_rates_most_pairs(
        pytester: pytest.Pytester, tmp_path: Path, proxy: RecordingProxy,
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = model_config(tmp_path, proxy, JUDGE_MAX_TOKENS)
    queries = tmp_path / "q.txt"
    queries.write_text("mars rover landing\n", encoding="utf-8")
    with FakeSearchServer() as engines:
        for key, value in engines.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        result = run_evals(pytester, tmp_path / "r", "-k", "news", "--queries", str(queries),
                           "--engines", "exa,brave", "--num-results", "2",
                           "--judge-model", str(config), "--judge-concurrency", "1",
                           module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    (path,) = (tmp_path / "r" / "search").glob("news__*.json")
    report = json.loads(path.read_text())
    results = [r for case in report["cases"] for r in case["results"]]
    rated = [r for r in results if r["rating"] is not None]
    assert results and len(rated) >= 0.8 * len(results), [r.get("judge_error") for r in results]
    judge = report["header"]["judge"]
    # llama-cpp-python refuses OpenAI's json_schema shape and takes json_object + schema
    assert judge["outputs"] == ["json_object"] and judge["served_models"] == [proxy.model]
