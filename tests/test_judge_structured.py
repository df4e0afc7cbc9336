"""Structured judge output (issue 35 item 1): the judges ask for their JSON Schema in the
shape the server takes, learn it from the server's own refusals, fall back to text, and a
report names the judge model, the served model id, the prompt versions and the shape.

Every server here is a loopback fake speaking real HTTP (``testing.structured`` decides
how it takes ``response_format``); ``chatty`` fakes answer like a small local model: prose
unless a schema constrains them.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import jsonschema
import pytest
from evalrun import run_evals

from needle_lib.cli import main
from needle_lib.contract.schema import SchemaError, validate_search_run
from needle_lib.judge.answer import AnswerJudge, parse_yes_no, says_yes
from needle_lib.judge.base import seen_in
from needle_lib.judge.cache import JudgeCache
from needle_lib.judge.identity import judge_setup, with_judge_seen
from needle_lib.judge.judge import RelevanceJudge
from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.profile import PROFILE_PROMPT_VERSION, parse_profile
from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION
from needle_lib.judge.schemas import ANSWER_SCHEMA, PROFILE_SCHEMA, VERDICT_SCHEMA
from needle_lib.judge.verdict import JudgeError, Verdict
from needle_lib.llm import AsyncChatClient, LLMHTTPError, RetryPolicy, make_async_chat_client
from needle_lib.llm.config import resolve_model
from needle_lib.llm.formats import JsonSchema, refuses_format, response_format
from needle_lib.llm.protocol import build_payload
from needle_lib.llm.structured import StructuredOutput
from needle_lib.search.types import SearchResult
from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.testing.real_model import GGUF_ENV, GGUF_NAME, model_id, model_path
from needle_lib.testing.search_server import JUDGE_YES, FakeSearchServer

TODAY = date(2026, 7, 2)
RESULTS = [SearchResult(url=f"https://news.example/{i}", title=f"Rover lands {i}",
                        snippet="Touched down at 04:12 UTC.") for i in range(4)]
TINY = JsonSchema("tiny", {"type": "object", "properties": {"ok": {"type": "boolean"}}})


def client(url: str, retry: RetryPolicy | None = None) -> AsyncChatClient:
    config = resolve_model("fake-judge", {"base_url": url, "api_key": "k"})
    return make_async_chat_client(config, retry=retry or RetryPolicy(attempts=1))


# --- the request shapes ---------------------------------------------------------------------


def test_each_shape_is_spelt_as_its_servers_document_it() -> None:
    assert response_format("json_schema", TINY) == {
        "type": "json_schema", "json_schema": {"name": "tiny", "schema": TINY.schema}}
    assert response_format("json_object", TINY) == {"type": "json_object",
                                                    "schema": TINY.schema}
    assert response_format("text", TINY) is None
    config = resolve_model("m", {"base_url": "http://127.0.0.1:9"})
    assert "response_format" not in build_payload(config, [])
    body = build_payload(config, [], response_format=response_format("json_object", TINY))
    assert body["response_format"]["type"] == "json_object"


@pytest.mark.parametrize("schema", [VERDICT_SCHEMA, PROFILE_SCHEMA, ANSWER_SCHEMA])
def test_the_schemas_are_valid_json_schemas(schema: JsonSchema) -> None:
    jsonschema.Draft202012Validator.check_schema(schema.schema)
    assert schema.name.replace("_", "").isalnum()  # OpenAI's name pattern


def test_a_reply_in_the_verdict_schema_is_one_the_parser_reads_and_prose_is_not() -> None:
    reply = {"reasoning": "On topic.", "integrity": "pass", "freshness": "n/a",
             "staleness": "pass", "domain": "n/a", "operators": "n/a", "rating": 3,
             "label": "HM"}
    jsonschema.validate(reply, VERDICT_SCHEMA.schema)
    assert parse_verdict(json.dumps(reply)).rating == 3
    with pytest.raises(jsonschema.ValidationError):  # off the scale
        jsonschema.validate({**reply, "rating": 5}, VERDICT_SCHEMA.schema)
    with pytest.raises(jsonschema.ValidationError):  # a runaway reasoning
        jsonschema.validate({**reply, "reasoning": "x" * 401}, VERDICT_SCHEMA.schema)
    profile = {"query_type": "specific", "query_domain": "news", "main_aspects": ["landing"],
               "aux_aspects": [], "content_archetype": "ephemeral"}
    jsonschema.validate(profile, PROFILE_SCHEMA.schema)
    assert parse_profile(json.dumps(profile), "mars rover").main_aspects == ("landing",)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"answer": "yes"}', True), ('{"answer": "no"}', False), ("Yes.", True),
    ('{"answer": "maybe"}', None), ('{"other": "yes"}', None)])
def test_a_structured_yes_or_no_is_read_by_its_answer(text: str, expected: bool | None) -> None:
    assert parse_yes_no(text) is expected


# --- detection per server ------------------------------------------------------------------


@pytest.mark.parametrize(("formats", "shape", "asked"), [
    ("openai", "json_schema", ["json_schema", "json_schema"]),
    ("llama-cpp-python", "json_object", ["json_schema", "json_object", "json_object"]),
    ("none", "text", ["json_schema", "json_object", "text", "text"]),
])
async def test_the_shape_a_server_takes_is_learnt_from_its_refusals_once(
        formats: str, shape: str, asked: list[str]) -> None:
    with FakeOpenAIServer("wrong", formats=formats) as server:
        structured = StructuredOutput()
        # the default retry policy: a refusal, even llama-cpp-python's 500, is not retried
        async with client(server.url, RetryPolicy()) as chat:
            answered = [await structured.complete(chat, [{"role": "user", "content": "hi"}],
                                                  TINY) for _ in range(2)]
    assert structured.shape == shape and [a.shape for a in answered] == [shape, shape]
    assert server.stats.response_formats == asked  # each refusal cost one request, once
    assert len(structured.refusals) == len(asked) - 2
    assert all("response_format" in why for why in structured.refusals)


async def test_an_error_that_is_not_a_refusal_of_the_format_is_raised_as_it_is() -> None:
    with FakeOpenAIServer("overflow") as server:  # llama.cpp's context overflow: a 400
        structured = StructuredOutput()
        async with client(server.url) as chat:
            with pytest.raises(LLMHTTPError) as caught:
                await structured.complete(chat, [{"role": "user", "content": "hi"}], TINY)
    assert not refuses_format(caught.value)
    assert structured.shape == "json_schema" and structured.refusals == []
    assert server.stats.response_formats == ["json_schema"]


# --- the judges ----------------------------------------------------------------------------


def relevance_judge(server: FakeSearchServer, tmp_path: Path) -> RelevanceJudge:
    return RelevanceJudge(client(server.url), cache=JudgeCache(tmp_path / "judge.sqlite"),
                          today=lambda: TODAY)


@pytest.mark.parametrize(("formats", "output"),
                         [("openai", "json_schema"), ("llama-cpp-python", "json_object")])
async def test_a_chatty_judge_rates_every_pair_when_its_server_constrains_it(
        tmp_path: Path, formats: str, output: str) -> None:
    with FakeSearchServer(formats=formats, chatty=True) as server:
        async with relevance_judge(server, tmp_path) as judge:
            verdicts = await judge.rate_many("mars rover landing", RESULTS)
    seen = seen_in(verdicts)
    assert all(isinstance(v, Verdict) for v in verdicts)
    assert judge.failures == 0 and judge.profile_errors == 0
    assert seen == {"judge_served_model": "fake-judge", "judge_output": output}
    assert set(server.response_formats[-len(RESULTS):]) == {output}


async def test_without_structured_output_the_reply_is_parsed_as_before(tmp_path: Path) -> None:
    # a server without response_format: a judge that writes JSON is still read ...
    with FakeSearchServer(formats="none") as server:
        async with relevance_judge(server, tmp_path / "a") as judge:
            verdicts = await judge.rate_many("mars rover landing", RESULTS)
    assert all(isinstance(v, Verdict) for v in verdicts)
    assert seen_in(verdicts)["judge_output"] == "text"
    # ... and a chatty one fails every pair, as an error, never a zero
    with FakeSearchServer(formats="none", chatty=True) as server:
        async with relevance_judge(server, tmp_path / "b") as judge:
            verdicts = await judge.rate_many("mars rover landing", RESULTS)
    assert all(isinstance(v, JudgeError) for v in verdicts)
    # the unreadable replies still say who wrote them, and how they were asked for
    assert seen_in(verdicts) == {"judge_served_model": "fake-judge", "judge_output": "text"}
    assert "no JSON object with a rating" in str(verdicts[0])
    assert judge.profile_errors == 1  # judged without a profile, as before


async def test_the_answer_judge_asks_for_its_schema_too(tmp_path: Path) -> None:
    hit = SearchResult(url="https://a.example", title="Q3", snippet=f"revenue {JUDGE_YES}")
    miss = SearchResult(url="https://b.example", title="Q3", snippet="revenue")
    with FakeSearchServer(formats="llama-cpp-python", chatty=True) as server:
        judge = AnswerJudge(client(server.url), cache=JudgeCache(tmp_path / "judge.sqlite"))
        async with judge:
            answers = await judge.decide_many("nvidia revenue", "$35.1bn", [hit, miss])
    assert [says_yes(a) for a in answers] == [True, False]
    assert seen_in(answers)["judge_output"] == "json_object"


# --- the report ----------------------------------------------------------------------------


def test_a_header_gathers_what_the_cases_saw_and_old_headers_still_read(tmp_path: Path) -> None:
    setup = judge_setup("fake-judge", "judged", 4)
    assert setup["profile_prompt_version"] == PROFILE_PROMPT_VERSION
    assert setup["prompt_version"] == JUDGE_PROMPT_VERSION
    header = {"bench": "news", "engines": ["exa"], "num_results": 5, "queries": {"count": 2},
              "judge": setup}
    cases = [{"query_id": "q1", "query": "a", "engine": "exa", "results": [],
              "judge_served_model": "smollm2", "judge_output": "json_object"},
             {"query_id": "q2", "query": "b", "engine": "exa", "results": [],
              "judge_served_model": None, "judge_output": None}]  # all from the cache
    gathered = with_judge_seen(header, cases)
    assert gathered["judge"]["served_models"] == ["smollm2"]
    assert gathered["judge"]["outputs"] == ["json_object"]
    assert "served_models" not in header["judge"]  # the journal's header is left alone
    validate_search_run(tmp_path / "new.json", gathered, cases)
    old = {**header, "judge": {"model": "x", "prompt_version": "needs-met-v3",
                               "concurrency": 8}}
    validate_search_run(tmp_path / "old.json", old, [])  # an earlier Needle's report
    with pytest.raises(SchemaError, match=r"judge.served_models"):
        validate_search_run(tmp_path / "bad.json",
                            {**header, "judge": {**setup, "served_models": "smollm2"}}, [])


@pytest.fixture
def chatty_search(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                  request: pytest.FixtureRequest):
    with FakeSearchServer(formats=request.param, chatty=True) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        yield server


@pytest.mark.parametrize("chatty_search", ["llama-cpp-python"], indirect=True)
def test_a_news_run_with_a_chatty_judge_rates_every_pair_and_says_how(
        pytester: pytest.Pytester, tmp_path: Path, chatty_search: FakeSearchServer) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("mars rover landing\nfed rate decision\n")
    result = run_evals(pytester, tmp_path / "r", "-k", "news", "--queries", str(queries),
                       "--engines", "exa,brave", module="")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    (path,) = (tmp_path / "r" / "search").glob("news__*.json")
    report = json.loads(path.read_text())
    judge = report["header"]["judge"]
    assert judge["model"] == "fake-judge" and judge["served_models"] == ["fake-judge"]
    assert judge["outputs"] == ["json_object"]
    assert judge["prompt_version"] == JUDGE_PROMPT_VERSION
    assert judge["profile_prompt_version"] == PROFILE_PROMPT_VERSION
    assert all(e["judge_errors"] == 0 for e in report["engines"].values())
    assert report["judged_pairs"] > 0
    assert {c["judge_output"] for c in report["cases"]} == {"json_object"}


# --- the real model's launcher, without starting it ----------------------------------------


def test_serve_real_names_a_missing_model_file_in_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(GGUF_ENV, str(tmp_path / "absent.gguf"))
    assert main(["serve", "model", "--real", "--port", "0"]) != 0
    err = capsys.readouterr().err
    assert f"{GGUF_ENV}={tmp_path / 'absent.gguf'}: no such file" in err
    assert "Traceback" not in err


def test_another_gguf_is_served_under_its_own_name(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    other = tmp_path / "qwen2.5-1.5b-instruct-q4_k_m.gguf"
    other.write_bytes(b"GGUF")
    monkeypatch.setenv(GGUF_ENV, str(other))
    assert model_path() == other and model_id(other) == "qwen2.5-1.5b-instruct-q4_k_m"
    assert model_id(Path("x") / GGUF_NAME) == "smollm2-135m"
