"""The shell examples in README.md and docs/ are run, so the docs cannot drift from the tool.

Every ```bash block runs, in a scratch copy of the repository's layout (``NEEDLE_ROOT``
pointing there, so results land in ``tmp_path``), with ``uv run`` replaced by the test's
own environment. An HTML comment right above a block changes that:

- ``<!-- docs-test: needs … -->``: it needs a real server, a key or the network, so it is
  only checked: every option exists for its command, every named config, corpus and engine
  exists (or, for a model, is a raw id and not a typo of a config);
- ``<!-- docs-test: background -->``: a ``needle serve`` fake; it is started first, with its
  port (and every URL naming it) moved to a free one;
- ``<!-- docs-test: exit N -->``: the block's last command exits N (pytest's 1 for FAILED).

A page's blocks run in one shell, in order, as a reader would type them.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from needle_lib.cli import build_parser
from needle_lib.llm.config import likely_typo
from needle_lib.paths import CORPORA_DIR, ENGINES_DIR, MODELS_DIR, REPO_ROOT
from needle_lib.search.registry import ENGINES

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
#: What a scratch run needs of the repository; results and caches stay in tmp_path.
LAYOUT = ("evals", "configs", "fixtures", "conftest.py", "pyproject.toml")
_FENCE = re.compile(r"^(?:<!-- docs-test: (?P<marker>[^>]*?) -->\n)?```(?:bash|sh|shell)\n"
                    r"(?P<body>.*?)^```$", re.M | re.S)
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    marker: str
    commands: list[str]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO_ROOT)}:{self.line}"

    @property
    def check_only(self) -> bool:
        return self.marker.startswith("needs")

    @property
    def background(self) -> bool:
        return self.marker == "background"

    @property
    def exit_status(self) -> int:
        return int(self.marker.removeprefix("exit ")) if self.marker.startswith("exit ") else 0


def commands(body: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    stripped = (re.sub(r"\s+#\s.*$", "", line).strip() for line in joined.splitlines())
    return [line for line in stripped if line and not line.startswith("#")]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(page, text.count("\n", 0, m.start()) + 1, (m["marker"] or "").strip(),
                  commands(m["body"])) for m in _FENCE.finditer(text)]


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]


def test_the_docs_have_shell_examples_and_every_marker_is_known() -> None:
    assert len(ALL_BLOCKS) >= 15
    for block in ALL_BLOCKS:
        assert block.marker == "" or block.check_only or block.background or \
            re.fullmatch(r"exit \d+", block.marker), f"{block.where}: marker {block.marker!r}"


# --- checked, not run -------------------------------------------------------------------


@cache
def pytest_options() -> frozenset[str]:
    """Every option `pytest evals` accepts, from its own --help."""
    shown = subprocess.run([sys.executable, "-m", "pytest", "evals", "--help", "-p",
                            "no:cacheprovider"], cwd=REPO_ROOT, capture_output=True,
                           text=True, check=True).stdout
    return frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", shown))


def needle_options(words: list[str]) -> tuple[str, frozenset[str]]:
    """(the subcommand path, its options) for ``needle A B …`` as the parser has them."""
    parser, path = build_parser(), ["needle"]
    for word in words:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
                   None)
        if sub is None or word not in sub.choices:
            break
        parser, path = sub.choices[word], [*path, word]
    options = {o for a in parser._actions for o in a.option_strings}
    return " ".join(path), frozenset(options)


def check_command(command: str) -> list[str]:
    """What is wrong with one command that cannot run here (empty: nothing)."""
    words = shlex.split(command.removeprefix("uv run "))
    if not words or words[0] not in ("pytest", "needle"):
        return []
    if words[0] == "pytest":
        name, known = "pytest evals", pytest_options()
    else:
        name, known = needle_options(words[1:])
    problems = [f"{name} has no option {word.split('=')[0]}" for word in words
                if word.startswith("-") and word != "-" and word.split("=")[0] not in known]
    for option, value in pairwise(words):
        if option == "--model" and value.endswith(".toml"):
            problems += [] if (REPO_ROOT / value).is_file() else [f"no model config {value}"]
        elif option == "--model" and not (MODELS_DIR / f"{value}.toml").is_file():
            close = likely_typo(value, [p.stem for p in MODELS_DIR.glob("*.toml")])
            problems += [f"--model {value}: a typo of {close}?"] if close else []
        elif option == "--corpus" and not (CORPORA_DIR / f"{value}.toml").is_file():
            problems.append(f"no corpus config {value}")
        elif option == "--engines" and words[0] == "pytest":
            known_engines = {*ENGINES, *(p.stem for p in ENGINES_DIR.glob("*.toml"))}
            problems += [f"no engine {e}" for e in value.split(",") if e not in known_engines]
    return problems


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.check_only],
                         ids=lambda b: b.where)
def test_examples_that_need_a_server_or_key_name_real_options_and_configs(block: Block) -> None:
    problems = [f"{command}: {problem}" for command in block.commands
                for problem in check_command(command)]
    assert not problems, f"{block.where}:\n" + "\n".join(problems)


def test_the_checker_catches_a_wrong_option_and_a_missing_config() -> None:
    assert check_command("uv run pytest evals --modle x") == ["pytest evals has no option --modle"]
    assert check_command("uv run needle status --model qwen36-53b") == [
        "--model qwen36-53b: a typo of qwen36-35b?"]
    assert check_command("uv run needle extract --corpus nope") == ["no corpus config nope"]
    assert check_command("uv run pytest evals --engines exa,bingo") == ["no engine bingo"]


# --- run --------------------------------------------------------------------------------


def scratch_repo(root: Path) -> dict[str, str]:
    """A copy of the repository's layout under ``root`` and the environment to run in it."""
    for name in LAYOUT:
        (root / name).symlink_to(REPO_ROOT / name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NEEDLE_", "PYTEST_")) and not k.endswith("_API_KEY")}
    return {**env, "NEEDLE_ROOT": str(root), "NEEDLE_CACHE_DIR": str(root / ".needle-cache"),
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "NO_COLOR": "1"}


def free_port_pair() -> int:
    """A free port whose successor is free too (``serve sources`` takes both)."""
    while True:
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port


@contextmanager
def served(command: str, cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """Start a ``needle serve`` block and wait until it says it is listening."""
    process = subprocess.Popen(shlex.split(command.removeprefix("uv run ")), cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output = []
        for line in process.stdout or ():
            output.append(line)
            if line.startswith("Ctrl-C stops it."):
                break
        else:
            pytest.fail(f"{command} exited before listening:\n{''.join(output)}")
        yield
    finally:
        process.send_signal(signal.SIGINT)
        process.wait()


def page_script(page_blocks: list[Block]) -> str:
    """The page's commands as one bash script that stops at the first unexpected status."""
    lines = ["set -u"]
    for block in page_blocks:
        for i, command in enumerate(block.commands):
            expected = block.exit_status if i == len(block.commands) - 1 else 0
            where = f"{block.where}: {command}"
            complaint = f"{shlex.quote(where)}: exit $rc, expected {expected}"
            lines += [command.removeprefix("uv run "), f"rc=$?; [ $rc -eq {expected} ] || "
                      f"{{ echo {complaint} >&2; exit 99; }}"]
    return "\n".join(lines) + "\n"


RUN_PAGES = sorted({b.page for b in ALL_BLOCKS if not b.check_only}, key=str)


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_offline_example_runs(page: Path, tmp_path: Path) -> None:
    page_blocks = [b for b in ALL_BLOCKS if b.page == page and not b.check_only]
    servers = [c for b in page_blocks if b.background for c in b.commands]
    script = page_script([b for b in page_blocks if not b.background])
    moved: dict[str, str] = {}
    for index, server in enumerate(servers):
        old = int(re.search(r"--port (\d+)", server)[1])  # type: ignore[index]
        new = free_port_pair()
        servers[index] = server.replace(f"--port {old}", f"--port {new}")
        moved |= {str(old): str(new)}
        if " sources " in server:  # its generation LLM listens on the next port
            moved |= {str(old + 1): str(new + 1)}
    script = re.sub(r"127\.0\.0\.1:(\d+)\b",
                    lambda m: f"127.0.0.1:{moved.get(m[1], m[1])}", script)
    env = scratch_repo(tmp_path)
    with ExitStack() as stack:
        for server in servers:
            stack.enter_context(served(server, tmp_path, env))
        run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
    assert run.returncode == 0, f"{page.name}:\n{run.stderr[-3000:]}\n{run.stdout[-3000:]}"
