"""End to end: ``pytest evals`` against loopback OpenAI-compatible servers."""

from __future__ import annotations

import pytest
from evalrun import assert_usage_error, load_dump, run_evals

from needle_lib.testing.openai_server import FakeOpenAIServer

CONTRACT_KEYS = {
    "schema_version", "prompt_version", "scorer_version", "in_progress", "complete", "valid",
    "corpus", "model", "sampling", "scoring", "notes", "package", "cases", "summary",
}
CASE_KEYS = {
    "function", "file", "start_line", "signature", "outcome", "matched", "scored",
    "hallucinated", "reindented", "bonus", "composition", "response", "latency_s", "usage",
    "error",
}
SELECT = ("-k", "http_server", "--corpus", "http_server", "--sample", "4")


def test_reference_model_is_the_default(pytester: pytest.Pytester, tmp_path):
    result = run_evals(pytester, tmp_path, *SELECT, "--notes", "smoke")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*no --model given*reference*--base-url*"])
    dump = load_dump(tmp_path, "http_server__reference")
    assert dump.keys() >= CONTRACT_KEYS
    assert (dump["in_progress"], dump["complete"], dump["valid"]) == (False, True, True)
    assert dump["notes"] == "smoke"
    assert dump["corpus"]["sha256"] and dump["corpus"]["files"] == ["fixtures/http_server.py"]
    assert len(dump["cases"]) == 4
    for case in dump["cases"]:
        assert case.keys() >= CASE_KEYS
        assert case["outcome"] == "passed" and case["matched"] == case["scored"] > 0
    assert dump["summary"]["matched_pct"] == 100.0
    # sizes in real tokens: the corpus, each case's estimate, and what the server counted
    assert dump["corpus"]["tokenizer"] == "qwen3.6" and dump["corpus"]["tokens"] > 10_000
    for case in dump["cases"]:
        assert dump["corpus"]["tokens"] < case["prompt_tokens_est"]
        assert case["usage"]["prompt_tokens"] == case["prompt_tokens_est"]
    served = dump["summary"]["prompt_tokens"]["served"]
    result.stdout.fnmatch_lines(["corpus*model*tokens*cases*",
                                 f"http_server*reference*{served / 1000:.1f}K*4*"])


def test_perfect_server_passes_every_case(pytester, tmp_path):
    with FakeOpenAIServer("perfect") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "anything",
                           "--base-url", server.url)
    result.assert_outcomes(passed=4)
    assert server.stats.requests == 5  # one preflight + four cases
    dump = load_dump(tmp_path, "http_server__anything")
    assert dump["model"]["name"] == "anything" and dump["valid"] and dump["complete"]


def test_wrong_answers_are_failed_not_errors(pytester, tmp_path):
    with FakeOpenAIServer("wrong") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(failed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*[[]FAIL[]]*matched=0/*", "*composition: code 0/*"])
    dump = load_dump(tmp_path, "http_server__m")
    assert dump["valid"] and {c["outcome"] for c in dump["cases"]} == {"failed"}
    assert all(c["hallucinated"] == 20 for c in dump["cases"])


@pytest.mark.parametrize("behaviour", ["http500", "html", "broken-json"])
def test_a_broken_server_errors_its_preflight_once_and_skips_the_pair(pytester, tmp_path,
                                                                      behaviour):
    with FakeOpenAIServer(behaviour) as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(errors=1, skipped=3)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*preflight for http_server__m failed*"])
    dump = load_dump(tmp_path, "http_server__m")
    assert dump["valid"] is False and dump["complete"] is False
    outcomes = [c["outcome"] for c in dump["cases"]]
    assert outcomes.count("error") == 1 and outcomes.count("skipped") == 3
    assert all("preflight of http_server__m failed" in c["skip_reason"]
               for c in dump["cases"] if c["outcome"] == "skipped")
    assert all(c["error"] for c in dump["cases"] if c["outcome"] == "error")


@pytest.mark.parametrize("behaviour", ["http500", "broken-json"])
def test_a_server_that_breaks_after_the_preflight_fails_fast(pytester, tmp_path, behaviour):
    with FakeOpenAIServer(behaviour, answer_first=1) as server:  # the preflight succeeds
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(errors=2, skipped=2)
    dump = load_dump(tmp_path, "http_server__m")
    assert all("fail-fast" in c["skip_reason"] for c in dump["cases"] if c["outcome"] == "skipped")
    assert all(c["error"] for c in dump["cases"] if c["outcome"] == "error")


def test_context_overflow_is_one_clear_error_with_the_fix(pytester, tmp_path):
    with FakeOpenAIServer("overflow") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(errors=1, skipped=3)
    assert server.stats.requests == 1  # the preflight; a 400 is not retried
    output = result.stdout.str()
    assert "4096" in output and "--ctx-size" in output and "lms load" in output
    error = load_dump(tmp_path, "http_server__m")["cases"][0]["error"]
    assert "context" in error and "4096" in error
    # the corpus's own size in real tokens, and what would fit instead
    assert "this corpus's prompt ≈ 1" in error and "tokens (qwen3.6)" in error
    assert "no shipped corpus fits a 4,096-token context" in error
    # the model's maximum is unknown: your own code first, then a larger context
    assert "Fix: `--repo PATH --max-prompt-tokens 2048`" in error
    assert "Or, if the model was trained on a 16,384-token context or more, load it" in error


def test_an_overflow_on_a_small_model_names_your_own_code_sized_to_fit(pytester, tmp_path):
    """Issue 34 item 3: an 8K model on llama.cpp cannot take any shipped corpus, and a
    larger --ctx-size does not help a model trained on 8K (its /v1/models says so): the
    fix named is --repo with a --max-prompt-tokens that fits, not a context to load."""
    with FakeOpenAIServer("perfect", server="llamacpp", context=8_192, maximum=8_192) as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(errors=1, skipped=3)
    error = load_dump(tmp_path, "http_server__m")["cases"][0]["error"]
    assert "Fix: `--repo PATH --max-prompt-tokens 6144` (your own code, sized to fit)" in error
    assert ("the model's own maximum is 8,192 tokens (llama.cpp GET /v1/models "
            "meta.n_ctx_train (the model's maximum)") in error
    assert "--ctx-size" not in error and "lms load" not in error
    assert "no shipped corpus fits an 8,192-token context" in error
    assert server.stats.requests == 1  # the preflight; the probe is metadata only


def test_a_server_counting_only_uncached_tokens_is_not_truncation(pytester, tmp_path):
    """Ollama's llama-server runner counts only what its prefix cache left to evaluate:
    after the first request, every case of a pair reports a task-sized prompt."""
    with FakeOpenAIServer("cached") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(passed=4)
    cases = load_dump(tmp_path, "http_server__m")["cases"]
    counts = sorted(c["prompt_count"] for c in cases)
    assert counts == ["cache_hit"] * 4  # the preflight saw the whole prompt first
    assert all(c["usage"]["prompt_tokens"] < c["prompt_tokens_est"] / 10 for c in cases)


def test_silent_truncation_is_an_error_caught_by_the_preflight(pytester, tmp_path):
    """An Ollama-like server keeps the last 4,096 tokens and answers: not the model's miss."""
    with FakeOpenAIServer("truncate") as server:
        result = run_evals(pytester, tmp_path, *SELECT, "--model", "m", "--base-url", server.url)
    result.assert_outcomes(errors=1, skipped=3)
    assert server.stats.requests == 1  # the preflight caught it; no case was asked
    result.stdout.fnmatch_lines(["*preflight for http_server__m failed*silently truncated*"])
    dump = load_dump(tmp_path, "http_server__m")
    assert dump["valid"] is False
    errors = [c for c in dump["cases"] if c["outcome"] == "error"]
    assert errors and all(c["matched"] is None for c in errors)  # never scored
    error = errors[0]["error"]
    estimate = f"{errors[0]['prompt_tokens_est']:,}"
    assert "usage.prompt_tokens = 4,096" in error and f"≈ {estimate} tokens" in error
    assert "num_ctx" in error and "OLLAMA_CONTEXT_LENGTH" in error and "--ctx-size" in error


@pytest.mark.parametrize("value", ["-3", "0"])
def test_a_non_positive_sample_is_a_usage_error_naming_the_option(pytester, tmp_path, value):
    result = run_evals(pytester, tmp_path, "--corpus", "http_server", "--sample", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --sample: must be at least 1, got {int(value)}*"])


def test_secrets_never_reach_dumps_or_output(pytester, tmp_path):
    secret_flag = "sk-flag-0123456789abcdefghij"
    secret_file = "sk-file-9876543210zyxwvutsrq"
    key_file = tmp_path / "model.key"
    key_file.write_text(secret_file)
    config = tmp_path / "keyed.toml"
    config.write_text(f'name = "keyed"\napi_key_file = "{key_file}"\n')
    results = tmp_path / "results"
    with FakeOpenAIServer("perfect") as server:
        flag_run = run_evals(pytester, results, *SELECT, "--model", "m", "--base-url",
                             server.url, "--api-key", secret_flag)
        file_run = run_evals(pytester, results, *SELECT, "--model", str(config),
                             "--base-url", server.url)
    flag_run.assert_outcomes(passed=4)
    file_run.assert_outcomes(passed=4)
    assert f"Bearer {secret_flag}" in server.stats.auth_headers  # the key was really used
    assert f"Bearer {secret_file}" in server.stats.auth_headers
    written = "".join(p.read_text() for p in results.rglob("*") if p.is_file())
    output = flag_run.stdout.str() + flag_run.stderr.str() + file_run.stdout.str()
    for secret in (secret_flag, secret_file):
        assert secret not in written and secret not in output


def test_parallel_and_serial_runs_agree(pytester, tmp_path):
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    with FakeOpenAIServer("reindent") as server:
        args = (*SELECT, "--model", "m", "--base-url", server.url)
        run_evals(pytester, serial, *args).assert_outcomes(failed=4)
        run_evals(pytester, parallel, *args, "-n", "2").assert_outcomes(failed=4)

    def verdicts(path):
        return [
            {k: c[k] for k in ("case_id", "outcome", "matched", "scored", "reindented",
                               "hallucinated", "composition")}
            for c in load_dump(path, "http_server__m")["cases"]
        ]

    assert verdicts(serial) == verdicts(parallel)
    assert all(v["reindented"] > 0 and v["hallucinated"] == 0 for v in verdicts(serial))


def test_unknown_corpus_is_a_usage_error(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, "--corpus", "nope")
    assert_usage_error(result, "unknown corpus 'nope'*configured corpora:*jquery*")


def test_broken_model_config_names_the_file(pytester, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ntemprature = 0.5\n')
    result = run_evals(pytester, tmp_path, *SELECT, "--model", str(bad))
    assert_usage_error(result, f"{bad}: unknown key 'temprature'*")


def test_missing_key_file_is_an_error_naming_the_file(pytester, tmp_path):
    config = tmp_path / "hosted.toml"
    config.write_text('name = "hosted"\napi_key_file = "/nonexistent/hosted.key"\n')
    result = run_evals(pytester, tmp_path, *SELECT, "--model", str(config))
    result.assert_outcomes(errors=2, skipped=2)
    result.stdout.fnmatch_lines(["*api_key_file /nonexistent/hosted.key does not exist*--api-key*"])


def test_dump_path_needs_a_single_pair(pytester, tmp_path):
    result = run_evals(pytester, tmp_path, "--dump", str(tmp_path / "one.json"))
    assert_usage_error(result, "--dump names one file, but this run has * pairs*")
    single = run_evals(pytester, tmp_path, *SELECT, "--dump", str(tmp_path / "one.json"))
    single.assert_outcomes(passed=4)
    assert load_dump(tmp_path, "one")["corpus"]["name"] == "http_server"
