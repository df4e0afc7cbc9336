"""`needle extract`, run in-process: target listings, JSON records, one target's ground truth."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from recall_helpers import cached_parse, real_corpus

from needle_lib.cli import main
from needle_lib.recall import suite
from needle_lib.recall.prompt import build_prompt
from needle_lib.tokens import count_tokens

RECORD_KEYS = {"name", "file", "signature", "start_line", "lines", "language", "composition"}


@pytest.fixture(autouse=True)
def parse_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse each corpus once per process, and keep the repo's on-disk cache untouched."""
    monkeypatch.setattr(suite, "parsed_corpus", cached_parse)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[list[dict], str]:
    assert main(["extract", *argv, "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_extract_all_json_is_the_ground_truth(capsys: pytest.CaptureFixture[str]) -> None:
    records, err = run_json(capsys, "--corpus", "jquery", "--all")
    jquery = real_corpus("jquery")
    assert isinstance(records, list)
    assert len(records) == len(jquery.targets.eligible)
    for record in records:
        assert record.keys() >= RECORD_KEYS
        start = record["start_line"]
        assert record["lines"] == jquery.lines[start - 1 : start + 19], record["name"]
        assert record["file"] == "fixtures/jquery.js"
        assert record["language"] == "javascript"
        assert sum(record["composition"].values()) == 20
        signature_lines = record["signature"].split("\n")
        assert jquery.lines[start - 1 - len(signature_lines) : start - 1] == signature_lines
    assert jquery.targets.exclusion_message() in err


def test_extract_samples_k_targets(capsys: pytest.CaptureFixture[str]) -> None:
    records, _ = run_json(capsys, "--corpus", "jquery")
    assert len(records) == 16
    assert [r["start_line"] for r in records] == sorted(r["start_line"] for r in records)
    assert main(["extract", "--corpus", "jquery"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("jquery: 16 sampled (k=16) target(s)\n")
    assert all(r["case_id"] in listing for r in records)
    tokens = count_tokens(jquery_text := real_corpus("jquery").corpus.text)
    low, high = min(r["prompt_tokens"] for r in records), max(r["prompt_tokens"] for r in records)
    assert f"  size: corpus {tokens:,} tokens, prompts {low:,}–{high:,} tokens (qwen3.6; " \
           f"{len(jquery_text):,} chars)\n" in listing
    assert 85_000 < tokens < low < high < tokens + 300  # a prompt is the corpus plus a task


def test_extract_prompt_tokens_count_the_whole_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    """The per-record count (preamble counted once, plus the task) is the whole prompt's."""
    records, _ = run_json(capsys, "--corpus", "http_server")
    server = real_corpus("http_server")
    by_name = {t.case_id: t for t in server.targets.eligible}
    for record in records[:3]:
        prompt = build_prompt(server.corpus, by_name[record["case_id"]])
        assert record["prompt_tokens"] == count_tokens(prompt)


def test_extract_single_file_mode(capsys: pytest.CaptureFixture[str]) -> None:
    records, _ = run_json(capsys, "--file", "fixtures/http_server.py")
    server = real_corpus("http_server")
    assert [r["name"] for r in records] == [t.name for t in server.targets.eligible]
    assert {r["language"] for r in records} == {"python"}


def test_extract_show_val(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "--corpus", "jquery", "--show", "val"]) == 0
    out = capsys.readouterr().out.split("\n")
    jquery = real_corpus("jquery")
    (val,) = [t for t in jquery.targets.eligible if t.name == "val"]
    kinds = val.window_kinds(jquery.parsed.kinds)
    assert out[0] == f"=== val  fixtures/jquery.js:{val.start_line} ==="
    assert out[1] == "signature: \tval: function( value ) {"
    for offset, line in enumerate(val.window(jquery.lines)):
        number = val.start_line + offset
        assert out[2 + offset] == f"{number:>6} {kinds[offset]:<9}| {line}"
    assert out[22:] == [""]


def test_extract_show_unknown_name_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "--corpus", "jquery", "--show", "noSuchThing"]) == 1
    assert "no eligible target named 'noSuchThing'" in capsys.readouterr().err


def test_extract_unknown_corpus_is_a_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "--corpus", "no_such_corpus"]) == 2
    assert "needle: unknown corpus 'no_such_corpus'" in capsys.readouterr().err


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    """``needle extract --all --json | head``: a closed pipe ends the pipeline as the shell
    expects (status 141, SIGPIPE's), with no BrokenPipeError traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "needle_lib.cli", "extract", "--corpus", "jquery", "--all",
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().strip() == b"["
    proc.stdout.close()  # its ~120 KB of JSON outgrow the pipe: the writer must notice
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 141
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
