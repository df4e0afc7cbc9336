"""The recall prompt, its parser, and the reference oracle that answers from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from recall_helpers import real_corpus, tmp_config, write_sources

from needle_lib.recall.corpus import Corpus, ScoringPolicy, load_corpus
from needle_lib.recall.extract import ParsedCorpus, parse_corpus
from needle_lib.recall.prompt import (
    END_OF_SOURCE,
    NO_THINK,
    build_messages,
    build_prompt,
    corpus_preamble,
    parse_prompt,
)
from needle_lib.recall.reference import reference_answer
from needle_lib.recall.score import score_answer
from needle_lib.recall.targets import Target, find_targets

REAL = ["jquery", "http_server"]


def task_of(prompt: str) -> str:
    """The part of a prompt after the corpus."""
    return prompt[prompt.index(END_OF_SOURCE) :]


def named(name: str, target: str) -> Target:
    return next(t for t in real_corpus(name).targets.eligible if t.case_id == target)


def test_corpus_first_task_last_and_a_shared_prefix() -> None:
    jquery = real_corpus("jquery")
    first, second = (build_prompt(jquery.corpus, t) for t in jquery.targets.eligible[:2])
    preamble = corpus_preamble(jquery.corpus)
    assert first.startswith(preamble) and second.startswith(preamble)
    assert jquery.corpus.text.rstrip("\n") in preamble
    shared = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    assert shared >= len(preamble)
    assert preamble.endswith(f"{END_OF_SOURCE}\n\n")
    assert first[len(preamble) :].startswith("Task: ")
    assert END_OF_SOURCE not in first[len(preamble) :]


def test_the_signature_is_quoted_verbatim_and_never_invented() -> None:
    jquery = real_corpus("jquery")
    val = named("jquery", "val")
    task = task_of(build_prompt(jquery.corpus, val))
    assert "\n    \tval: function( value ) {\n" in task
    assert "`val`" in task
    assert "function val(" not in build_prompt(jquery.corpus, val)
    for target in jquery.targets.eligible:
        quoted = "\n".join("    " + line for line in target.function.signature.split("\n"))
        assert f"\n\n{quoted}\n\n" in task_of(build_prompt(jquery.corpus, target)), target.case_id


@pytest.mark.parametrize("primary_lines", [20, 7])
def test_the_prompt_asks_for_exactly_n_lines(primary_lines: int) -> None:
    server = real_corpus("http_server")
    target = Target(named("http_server", "is_cgi").function, primary_lines, "is_cgi")
    task = task_of(build_prompt(server.corpus, target))
    counts = re.findall(r"\b(\d+) lines\b", task)
    assert counts and set(counts) == {str(primary_lines)}
    assert f"first {primary_lines} lines" in task
    assert f"Output the {primary_lines} lines" in task


def test_no_think_suffix_is_optional() -> None:
    server = real_corpus("http_server")
    target = named("http_server", "is_cgi")
    plain = build_prompt(server.corpus, target)
    suffixed = build_prompt(server.corpus, target, no_think=True)
    assert suffixed == plain + NO_THINK and not plain.endswith(NO_THINK)
    assert build_messages(server.corpus, target, no_think=True) == [
        {"role": "user", "content": suffixed}
    ]
    assert parse_prompt(suffixed) == parse_prompt(plain)


# --- multi-file corpora -----------------------------------------------------------------


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, ParsedCorpus]:
    twin = "def shared(x):\n    y = x\n    z = y\n    return z\n"
    directory = write_sources(tmp_path_factory.mktemp("multi"), {
        "a.py": "import os\n\n\n" + twin,
        "b.py": twin + "\n\ndef long_header(\n    first,\n    second,\n):\n"
        '    """Doc."""\n    total = first + second\n    return total\n',
    })
    corpus = load_corpus(tmp_config(directory, "*.py"))
    return corpus, parse_corpus(corpus)


def test_a_file_path_is_named_only_in_multi_file_prompts(multi) -> None:
    corpus, parsed = multi
    for target in find_targets(parsed, 3).eligible:
        task = task_of(build_prompt(corpus, target))
        assert f" in the file `{target.function.file}` in the source above." in task
    assert corpus_preamble(corpus).startswith("Below are 2 source files, concatenated")
    server = real_corpus("http_server")
    task = task_of(build_prompt(server.corpus, named("http_server", "is_cgi")))
    assert "in the file" not in task and "http_server.py" not in task


def test_parse_prompt_round_trips(multi) -> None:
    corpus, parsed = multi
    targets = find_targets(parsed, 3).eligible
    assert {t.name for t in targets} == {"shared", "long_header"}
    for target in targets:
        asked = parse_prompt(build_prompt(corpus, target, no_think=True))
        assert asked.signature == target.function.signature
        assert asked.lines == 3
        assert asked.file == target.function.file
        assert asked.source == corpus.text
    server = real_corpus("http_server")
    asked = parse_prompt(build_prompt(server.corpus, named("http_server", "is_cgi")))
    assert asked.file is None
    assert asked.source == server.corpus.text


def test_parse_prompt_refuses_a_foreign_prompt() -> None:
    with pytest.raises(ValueError, match="not a Needle recall prompt"):
        parse_prompt("Please write a poem about needles.")


def test_reference_answers_from_the_named_file(multi) -> None:
    corpus, parsed = multi
    for target in find_targets(parsed, 3).eligible:
        answer = reference_answer(build_messages(corpus, target))
        assert answer.split("\n") == target.window(corpus.lines), target.case_id
    (shared,) = [t for t in find_targets(parsed, 3).eligible if t.name == "shared"]
    assert Path(shared.function.file).name == "a.py"


@pytest.mark.parametrize("name", REAL)
def test_reference_oracle_scores_100_percent_on_every_target(name: str) -> None:
    loaded = real_corpus(name)
    assert loaded.targets.eligible
    for target in loaded.targets.eligible:
        answer = reference_answer(build_messages(loaded.corpus, target))
        window = target.window(loaded.lines)
        assert answer.split("\n") == window, target.case_id
        score = score_answer(
            answer,
            window,
            target.window_kinds(loaded.parsed.kinds),
            target.bonus_window(loaded.lines),
            ScoringPolicy(),
        )
        assert score.passed and score.matched == score.scored > 0, target.case_id
        assert (score.hallucinated, score.reindented, score.missing) == (0, 0, 0)


def test_reference_refuses_a_signature_missing_from_the_source() -> None:
    server = real_corpus("http_server")
    target = named("http_server", "is_cgi")
    prompt = build_prompt(server.corpus, target).replace(
        f"    {target.function.signature}\n", "    def not_in_the_source(self):\n"
    )
    with pytest.raises(ValueError, match="does not occur in the source"):
        reference_answer([{"role": "user", "content": prompt}])


# --- seed defect (c): the anchor exists in the corpus -----------------------------------


@pytest.mark.parametrize("name", REAL)
def test_every_anchor_is_the_text_right_before_the_window(name: str) -> None:
    loaded = real_corpus(name)
    text = loaded.corpus.text
    offsets = [0]
    for line in loaded.lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for target in loaded.targets.eligible:
        signature = target.function.signature
        begin = offsets[target.function.signature_line - 1]
        end = offsets[target.start_line - 1]
        assert text[begin:end] == signature + "\n", target.case_id
        constructed = f"function {target.name}("
        if constructed not in signature:
            task = task_of(build_prompt(loaded.corpus, target))
            assert constructed not in task, target.case_id
