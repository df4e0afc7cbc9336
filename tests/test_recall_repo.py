"""A corpus from a git checkout: which files, how many, recorded how — and a run on one."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from evalrun import load_dump, run_evals
from recall_helpers import cached_parse

from needle_lib.cli import main
from needle_lib.recall import suite
from needle_lib.recall.corpus import (
    CorpusConfig,
    load_corpus,
    load_corpus_config,
    recorded_repo_corpus,
    repo_config,
    sized_for,
)
from needle_lib.recall.prompt import corpus_preamble
from needle_lib.recall.repo import (
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_SOURCE,
    TASK_ROOM,
    KnownContext,
    RepoSpec,
    prompt_budget,
)
from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.tokens import counted_tokens
from needle_lib.tomlconf import ConfigError


def _function(language: str, name: str, lines: int) -> str:
    body = [f"    x{i} = {i}" for i in range(lines)]
    if language == "py":
        return "\n".join([f"def {name}():", *body, "    return 0", ""]) + "\n"
    go = [f"\tx{i} := {i}\n\t_ = x{i}" for i in range(lines)]
    return "\n".join([f"func {name}() int {{", *go, "\treturn 0", "}", ""]) + "\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    files = {
        "src/alpha.py": _function("py", "alpha", 30),
        "src/beta.py": _function("py", "beta", 30),
        "src/gamma/delta.py": _function("py", "delta", 30),
        "svc/main.go": "package main\n\n" + _function("go", "Serve", 30),
        "vendor/lib.py": _function("py", "vendored", 30),
        "build/generated.py": _function("py", "generated", 30),
        "notes.txt": "not source\n",
        "src/__init__.py": "",
        ".gitignore": "build/\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    (root / "src" / "untracked.py").write_text(_function("py", "fresh", 30), encoding="utf-8")
    return root


def spec_config(root: Path, budget: int | None = None, **globs: tuple[str, ...]) -> CorpusConfig:
    """``--repo root`` with ``budget`` and include/exclude ``globs``."""
    config = sized_for(repo_config(root), [], budget)
    assert config.repo is not None
    return replace(config, repo=replace(config.repo, **globs))


def test_the_corpus_is_what_git_would_commit(checkout: Path) -> None:
    corpus = load_corpus(spec_config(checkout, exclude=("vendor/*",)))
    assert corpus.repo is not None
    assert [f.path for f in corpus.files] == [
        "src/alpha.py", "src/beta.py", "src/gamma/delta.py", "src/untracked.py", "svc/main.go",
    ]  # .gitignore'd build/, the excluded glob, an unsupported .txt, an empty file: left out
    assert corpus.language == "go+python"
    assert corpus.repo.commit == git(checkout, "rev-parse", "HEAD")
    assert corpus.repo.dirty  # the untracked file is a local change
    described = corpus.describe()
    assert described["repo"]["commit"] == corpus.repo.commit
    assert described["repo"]["exclude"] == ["vendor/*"]
    assert described["files"] == [f.path for f in corpus.files]


def test_a_subfolder_uses_only_its_own_files_and_records_the_folder(checkout: Path) -> None:
    """``--repo ~/src/app/pkg`` offers pkg's code, never the rest of the repository's."""
    config = spec_config(checkout / "src" / "gamma")
    assert config.name == "repo_gamma"
    corpus = load_corpus(config)
    assert [f.path for f in corpus.files] == ["src/gamma/delta.py"]
    assert corpus.repo is not None and corpus.repo.root == checkout
    assert corpus.describe()["repo"]["folder"] == "src/gamma"
    assert corpus.repo.candidates == 1
    assert load_corpus(spec_config(checkout)).describe()["repo"]["folder"] == "."


def test_include_globs_select_and_a_clean_checkout_is_not_dirty(checkout: Path) -> None:
    (checkout / "src" / "untracked.py").unlink()
    corpus = load_corpus(spec_config(checkout, include=("svc/*", "src/gamma/*")))
    assert [f.path for f in corpus.files] == ["src/gamma/delta.py", "svc/main.go"]
    assert corpus.repo is not None and not corpus.repo.dirty


def test_the_budget_bounds_the_prompt_and_the_choice_is_deterministic(checkout: Path) -> None:
    everything = load_corpus(spec_config(checkout))
    budget = counted_tokens(corpus_preamble(everything)) // 2
    first, again = (load_corpus(spec_config(checkout, budget)) for _ in range(2))
    assert first.text == again.text and first.repo == again.repo
    assert 0 < len(first.files) < len(everything.files)
    assert counted_tokens(corpus_preamble(first)) <= budget - TASK_ROOM
    assert first.repo is not None and first.repo.budget == budget
    assert first.repo.candidates == len(everything.files)


def test_the_budget_comes_from_the_flag_the_config_or_the_models() -> None:
    spec = RepoSpec(Path("."))
    assert prompt_budget(spec) == (DEFAULT_PROMPT_TOKENS, DEFAULT_SOURCE)
    small = KnownContext(16_384, "context_tokens of a.toml")
    contexts = [KnownContext(32_768, "context_tokens of b.toml"), small]
    assert prompt_budget(spec, contexts) == (
        16_384 - 2_048,
        "context_tokens of a.toml: a 16,384-token context less 2,048 for the answer")
    flagged = RepoSpec(Path("."), max_prompt_tokens=9_000, budget_source="--max-prompt-tokens")
    assert prompt_budget(flagged, [small]) == (9_000, "--max-prompt-tokens")


def test_a_models_maximum_only_lowers_the_default_budget() -> None:
    """A model trained on 8K cannot read 30K; one trained on 128K may be loaded with 4K,
    so its maximum does not raise the default."""
    spec = RepoSpec(Path("."))
    eight = KnownContext(8_192, "LM Studio max_context_length", ceiling=True)
    assert prompt_budget(spec, [eight])[0] == 8_192 - 2_048
    assert "maximum context" in prompt_budget(spec, [eight])[1]
    huge = KnownContext(131_072, "LM Studio max_context_length", ceiling=True)
    assert prompt_budget(spec, [huge]) == (DEFAULT_PROMPT_TOKENS, DEFAULT_SOURCE)
    loaded = KnownContext(65_536, "llama.cpp GET /props")
    assert prompt_budget(spec, [huge, loaded])[0] == 65_536 - 2_048


def test_bad_checkouts_and_budgets_are_config_errors(checkout: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ConfigError, match=r"not a readable git checkout"):
        load_corpus(spec_config(plain))
    with pytest.raises(ConfigError, match=r"no such directory"):
        load_corpus(spec_config(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"no readable source file fits a prompt budget of "
                       r"522 tokens, set by --max-prompt-tokens .*raise it with"):
        load_corpus(spec_config(checkout, TASK_ROOM + 10))


def test_a_repo_corpus_config(checkout: Path, tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(textwrap.dedent(f"""\
        [repo]
        path = "{checkout}"
        include = ["src/*"]
        exclude = ["src/gamma/*"]
        max_prompt_tokens = 20000

        [sample]
        k = 4
        seed = 1
        primary_lines = 10
        """), encoding="utf-8")
    config = load_corpus_config(path)
    assert config.repo == RepoSpec(checkout, ("src/*",), ("src/gamma/*",), 20_000,
                                   f"max_prompt_tokens of {path}")
    corpus = load_corpus(config)
    assert [f.path for f in corpus.files] == ["src/alpha.py", "src/beta.py", "src/untracked.py"]
    path.write_text(path.read_text() + '\n[files]\ndirectory = "."\nglob = "*.py"\n')
    with pytest.raises(ConfigError, match=r"exactly one of \[files\] .* and \[repo\]"):
        load_corpus_config(path)


def test_needle_extract_repo_shows_the_files_and_targets(
    checkout: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suite, "parsed_corpus", cached_parse)  # leave the disk cache alone
    assert main(["extract", "--repo", str(checkout), "--all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("repo_project: 6 eligible target(s)")
    assert f"repo: {checkout} at {git(checkout, 'rev-parse', 'HEAD')[:12]} (local changes)" in out
    assert "6 of 6 readable file(s) fit 30,720 prompt tokens" in out
    for name in ("alpha", "beta", "delta", "fresh", "Serve", "vendored"):
        assert f"  {name} " in out


def test_pytest_evals_repo_runs_end_to_end_and_rescores(
    checkout: Path, pytester: pytest.Pytester, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    results = tmp_path / "results"
    result = run_evals(pytester, results, "--repo", str(checkout), "--max-prompt-tokens", "6000")
    dump = load_dump(results, "repo_project__reference")
    cases = len(dump["cases"])
    result.assert_outcomes(passed=cases)
    assert cases >= 2 and dump["summary"]["matched_pct"] == 100.0
    assert dump["corpus"]["repo"]["commit"] == git(checkout, "rev-parse", "HEAD")
    assert dump["corpus"]["repo"]["max_prompt_tokens"] == 6000
    assert all(case["prompt_tokens_est"] <= 6000 for case in dump["cases"])
    assert {case["file"] for case in dump["cases"]} <= set(dump["corpus"]["files"])
    assert dump["corpus"]["repo"]["folder"] == "."
    # `needle status` lists pairs that exist only as dumps (no corpus or model config)
    raw = {**dump, "in_progress": True,
           "model": {**dump["model"], "key": "fake-mixed", "name": "fake-mixed",
                     "request": {**dump["model"]["request"], "source": "raw"}}}
    (results / "repo_project__fake-mixed.json").write_text(json.dumps(raw))
    assert main(["status", "--results", str(results)]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"^repo_project__reference +complete", listed, re.M)
    assert re.search(r"^repo_project__fake-mixed +in progress", listed, re.M)
    assert (f"→ uv run pytest evals --repo {checkout} --model fake-mixed --resume"
            in listed)
    assert main(["status", "--results", str(results), "--model", "fake-mixed"]) == 0
    assert "repo_project__reference" not in capsys.readouterr().out
    # `needle rescore` needs no corpus config: the dump records the checkout and its files
    path = str(results / "repo_project__reference.json")
    assert main(["rescore", path, "--relax-indent"]) == 0
    assert "100.0%" in capsys.readouterr().out
    edited = checkout / dump["corpus"]["files"][0]
    edited.write_text("# edited after the run\n" + edited.read_text())
    if edited.name != "untracked.py":  # the commit still has the text
        assert main(["rescore", path]) == 0
        capsys.readouterr()
    (checkout / "src" / "untracked.py").write_text("# changed\n")
    assert main(["rescore", path]) == 2
    assert re.search(r"no longer make the text this dump was asked about.*check out commit "
                     r"[0-9a-f]{12} \(the run had local changes", capsys.readouterr().err)


def test_a_repo_with_no_eligible_function_fails_like_a_run_that_ran_nothing(
    tmp_path: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every function shorter than the window: exit 5 with the reason and the flag, no
    dump, no HTML report — never a green "1 skipped" that tested nothing."""
    root = tmp_path / "short"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_text(_function("py", "brief", 1) + _function("py", "tiny", 0))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    results = tmp_path / "results"
    result = run_evals(pytester, results, "--repo", str(root), "--primary-lines", "4")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "no case ran: repo_short: no function is eligible to ask about: 2 function(s) found, "
        "2 with a body shorter than primary_lines = 4 lines (the longest has 2); "
        "ask about a shorter window with --primary-lines N (N ≤ 2)*",
    ])
    assert "skipped" not in result.stdout.str()
    assert not results.exists() or not any(results.rglob("*.*"))  # no dump, no report
    monkeypatch.setattr(suite, "parsed_corpus", cached_parse)
    assert main(["extract", "--repo", str(root), "--all"]) == 0
    out, err = capsys.readouterr()
    assert "functions: 2 function(s) found, 2 with a body shorter than primary_lines = 20" in out
    assert "ask about a shorter window with --primary-lines N" in err
    assert main(["extract", "--repo", str(root), "--all", "--primary-lines", "2"]) == 0
    assert capsys.readouterr().out.startswith("repo_short: 1 eligible target(s)")


def test_symlinks_and_paths_outside_the_checkout_are_never_read(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 32 item 1: `helpers.py -> ~/.aws/credentials` (valid Python, git mode 120000)
    put the credentials into every prompt. Neither a tracked link, an untracked one, nor a
    tracked file under a symlinked directory is read; each is named with the reason."""
    secrets = tmp_path / "home" / ".aws"
    secrets.mkdir(parents=True)
    (secrets / "credentials").write_text('aws_secret_access_key = "AKIASECRETCANARY"\n')
    (secrets / "tool.py").write_text(_function("py", "leaked", 30))
    (checkout / "src" / "helpers.py").symlink_to(secrets / "credentials")
    git(checkout, "add", "src/helpers.py")
    git(checkout, "commit", "-q", "-m", "a link")
    assert git(checkout, "ls-files", "-s", "src/helpers.py").startswith("120000")
    (checkout / "src" / "env.py").symlink_to(secrets / "credentials")  # untracked link
    (checkout / "src" / "inside.py").symlink_to(checkout / "src" / "alpha.py")  # a link still
    (checkout / "linked").mkdir()
    (checkout / "linked" / "tool.py").write_text(_function("py", "tool", 30))
    git(checkout, "add", "linked/tool.py")
    git(checkout, "commit", "-q", "-m", "tracked file")
    (checkout / "linked" / "tool.py").unlink()
    (checkout / "linked").rmdir()
    (checkout / "linked").symlink_to(secrets)  # tracked linked/tool.py now reads ~/.aws/tool.py
    (secrets / "tool.py").rename(secrets / "tool.py.bak")
    (secrets / "tool.py").symlink_to(secrets / "tool.py.bak")

    corpus = load_corpus(spec_config(checkout))
    assert "AKIASECRETCANARY" not in corpus.text and "leaked" not in corpus.text
    assert "src/alpha.py" in [f.path for f in corpus.files]
    left_out = {item.path: item.reason for item in corpus.left_out}
    assert set(left_out) == {"src/helpers.py", "src/env.py", "src/inside.py", "linked/tool.py"}
    assert "symbolic link" in left_out["src/helpers.py"]
    assert "symbolically linked directory" in left_out["linked/tool.py"]
    assert corpus.describe()["left_out"][0] == {"path": "linked/tool.py",
                                                "reason": left_out["linked/tool.py"]}
    message = corpus.left_out_message()
    assert message is not None and "src/helpers.py: a symbolic link" in message

    monkeypatch.setattr(suite, "parsed_corpus", cached_parse)
    assert main(["extract", "--repo", str(checkout), "--all"]) == 0
    err = capsys.readouterr().err
    assert "repo_project: left out 4 file(s)" in err and "src/env.py" in err


def test_a_checkout_of_nothing_but_links_names_them(tmp_path: Path) -> None:
    root = tmp_path / "links"
    root.mkdir()
    (tmp_path / "secret.py").write_text(_function("py", "secret", 30))
    (root / "a.py").symlink_to(tmp_path / "secret.py")
    git(root, "init", "-q")
    with pytest.raises(ConfigError, match="1 left out as symlinks or outside the checkout"):
        load_corpus(spec_config(root))


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "workers"])
def test_a_repo_run_is_sized_to_the_context_its_server_reports(
    checkout: Path, pytester: pytest.Pytester, tmp_path: Path, workers: tuple[str, ...],
) -> None:
    """Issue 34 item 3: a raw model id on a llama.cpp server loaded with a small context
    gets a budget from ``GET /props`` (not 30,720), says so on the terminal and in the dump,
    and the server is asked once per run — workers get the controller's answer."""
    whole = counted_tokens(corpus_preamble(load_corpus(spec_config(checkout))))
    context = 2_048 + TASK_ROOM + whole // 2  # room for about half of the checkout
    results = tmp_path / "results"
    with FakeOpenAIServer("perfect", server="llamacpp", context=context) as server:
        result = run_evals(pytester, results, "--repo", str(checkout), "--model", "m",
                           "--base-url", server.url, *workers)
    dump = load_dump(results, "repo_project__m")
    result.assert_outcomes(passed=len(dump["cases"]))
    repo = dump["corpus"]["repo"]
    assert repo["max_prompt_tokens"] == context - 2_048
    assert repo["chosen"] < repo["candidates"]
    source = (f"llama.cpp GET /props default_generation_settings.n_ctx at {server.url}: "
              f"a {context:,}-token context less 2,048 for the answer")
    assert repo["budget_source"] == source
    result.stdout.fnmatch_lines([
        f"repo_project: prompt budget {context - 2_048:,} tokens, set by {source}"])
    assert server.stats.metadata_paths == ["GET /v1/models", "GET /props"]


def test_a_server_that_reports_nothing_keeps_the_default_budget(
    checkout: Path, pytester: pytest.Pytester, tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    with FakeOpenAIServer("perfect") as server:  # a generic server: every metadata path 404s
        result = run_evals(pytester, results, "--repo", str(checkout), "--model", "m",
                           "--base-url", server.url)
    dump = load_dump(results, "repo_project__m")
    result.assert_outcomes(passed=len(dump["cases"]))
    assert dump["corpus"]["repo"]["max_prompt_tokens"] == DEFAULT_PROMPT_TOKENS
    assert dump["corpus"]["repo"]["budget_source"] == DEFAULT_SOURCE
    result.stdout.fnmatch_lines([f"repo_project: prompt budget 30,720 tokens, set by "
                                 f"{DEFAULT_SOURCE}"])


def test_a_repo_overflow_names_the_budget_that_fits(
    checkout: Path, pytester: pytest.Pytester, tmp_path: Path,
) -> None:
    """A server that reports no context but overflows: the preflight's message names the
    --max-prompt-tokens that fits, and what set the budget that did not."""
    for number in range(4):  # ~9K tokens in all: more than the server's context
        (checkout / "src" / f"long{number}.py").write_text(_function("py", f"f{number}", 300))
    results = tmp_path / "results"
    with FakeOpenAIServer("perfect", context=2_048 + 4_096) as server:
        result = run_evals(pytester, results, "--repo", str(checkout), "--model", "m",
                           "--base-url", server.url)
    assert result.ret != 0
    error = next(c["error"] for c in load_dump(results, "repo_project__m")["cases"]
                 if c["outcome"] == "error")
    assert "Fix: rerun with `--max-prompt-tokens 4096` (fits a 6,144-token context" in error
    assert f"its budget, 30,720 tokens, was set by {DEFAULT_SOURCE}" in error


@pytest.mark.parametrize("named", ["../outside.py", "/etc/hostname", "src/link.py"])
def test_a_dump_cannot_make_rescore_read_a_file_outside_its_checkout(
    checkout: Path, tmp_path: Path, named: str,
) -> None:
    """A dump is a file anyone can edit: the file list ``needle rescore`` rebuilds a
    ``--repo`` corpus from is confined like a run's own listing."""
    (tmp_path / "outside.py").write_text(_function("py", "outside", 30))
    (checkout / "src" / "link.py").symlink_to(tmp_path / "outside.py")
    block = load_corpus(spec_config(checkout)).describe()
    assert recorded_repo_corpus(block).sha256 == block["sha256"]  # the untouched dump reads
    tampered = {**block, "files": [named, *block["files"][1:]]}
    with pytest.raises(ConfigError, match=re.escape(f"the dump's file {named!r} is not read")):
        recorded_repo_corpus(tampered)


def test_a_repository_with_no_commit_yet_says_so(tmp_path: Path) -> None:
    """``git init`` and no commit: once a cryptic git usage line, now what to do."""
    root = tmp_path / "new"
    root.mkdir()
    (root / "a.py").write_text(_function("py", "alpha", 30))
    git(root, "init", "-q")
    with pytest.raises(ConfigError, match=r"no commit yet.*commit once"):
        load_corpus(spec_config(root))
