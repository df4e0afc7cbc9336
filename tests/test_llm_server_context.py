"""Asking a model server what context it serves: each server's own endpoint, real shapes."""

from __future__ import annotations

import time

import pytest

from needle_lib.llm import resolve_model
from needle_lib.llm.server_context import ServerContext, probe_context, server_root
from needle_lib.testing.loopback import closed_port_url
from needle_lib.testing.openai_server import FakeOpenAIServer

CASES = {
    # server: (what it reports as loaded, its source, the paths asked)
    "llamacpp": ("llama.cpp GET /props default_generation_settings.n_ctx",
                 ["GET /v1/models", "GET /props"]),
    "vllm": ("vLLM GET /v1/models max_model_len", ["GET /v1/models"]),
    "lmstudio": ("LM Studio GET /api/v0/models loaded_context_length",
                 ["GET /v1/models", "GET /props", "GET /api/v0/models"]),
    "ollama": ("Ollama POST /api/show num_ctx",
               ["GET /v1/models", "GET /props", "GET /api/v0/models", "POST /api/show"]),
}


@pytest.mark.parametrize("server", sorted(CASES))
def test_each_server_reports_its_loaded_context_where_it_documents_it(server: str) -> None:
    source, paths = CASES[server]
    with FakeOpenAIServer(server=server, context=8_192, maximum=131_072) as fake:
        found = probe_context(resolve_model("fake-model", {"base_url": fake.url + "/v1"}))
    assert found is not None and found.loaded == 8_192
    assert found.source == f"{source} at {fake.url}"
    assert fake.stats.metadata_paths == paths and fake.stats.requests == 0  # no chat
    if server != "vllm":  # vLLM's max_model_len is the only number it gives
        assert found.maximum == 131_072


@pytest.mark.parametrize("server", ["llamacpp", "lmstudio", "ollama"])
def test_a_models_maximum_alone_is_reported_as_a_ceiling(server: str) -> None:
    """Nothing loaded (LM Studio loads on first use; Ollama without num_ctx runs with its
    own default): only the model's maximum is known."""
    with FakeOpenAIServer(server=server, context=None, maximum=8_192) as fake:
        found = probe_context(resolve_model("fake-model", {"base_url": fake.url}))
    assert found is not None and (found.loaded, found.maximum) == (None, 8_192)
    assert "(the model's maximum)" in found.source and found.source == found.maximum_source


def test_a_server_that_says_nothing_or_is_down_keeps_todays_behaviour() -> None:
    with FakeOpenAIServer() as fake:  # generic: 404 for every metadata path
        assert probe_context(resolve_model("m", {"base_url": fake.url})) is None
    started = time.monotonic()
    assert probe_context(resolve_model("m", {"base_url": closed_port_url()})) is None
    assert time.monotonic() - started < 2  # a refusal ends the probe at once, unretried
    assert probe_context(resolve_model("reference", {})) is None


def test_each_server_is_asked_once_per_process() -> None:
    with FakeOpenAIServer(server="vllm", context=4_096) as fake:
        model = resolve_model("fake-model", {"base_url": fake.url})
        assert probe_context(model) == probe_context(model)
    assert fake.stats.metadata_paths == ["GET /v1/models"]


def test_the_answer_travels_as_json_and_the_root_drops_v1() -> None:
    answer = ServerContext(8_192, 32_768, "a", "b")
    assert ServerContext.from_json(answer.to_json()) == answer
    assert server_root("http://h:1/v1/") == server_root("http://h:1") == "http://h:1"
