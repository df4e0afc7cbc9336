"""`needle serve` stops cleanly on the signals a script or a CI runner sends it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


def start_serve(*args: str, preexec: Callable[[], None] | None = None
                ) -> tuple[subprocess.Popen[str], str]:
    """``needle serve ARGS`` started, and what it printed up to its "Ctrl-C stops it."."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from needle_lib.cli import main; sys.exit(main())",
         "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=preexec)
    output = []
    for line in process.stdout or ():
        output.append(line)
        if line.startswith("Ctrl-C stops it."):
            break
    return process, "".join(output)


def ignore_sigint() -> None:
    """What a non-interactive shell does to a job it starts with ``&``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum, preexec", [
    pytest.param(signal.SIGTERM, None, id="sigterm"),
    pytest.param(signal.SIGINT, ignore_sigint, id="sigint-in-a-background-job"),
])
def test_a_signal_stops_the_fake_and_removes_its_temporary_files(signum, preexec) -> None:
    process, output = start_serve("sources", "news", "--port", "0", preexec=preexec)
    try:
        feeds = Path(re.search(r"--feeds (\S+)", output)[1])  # type: ignore[index]
        assert feeds.is_file()
        process.send_signal(signum)
        assert process.wait(timeout=600) == 0
    finally:
        process.kill()
        process.wait()
    assert not feeds.parent.exists()


def test_serve_model_reports_the_context_a_server_of_that_kind_would() -> None:
    """``needle serve model --server llamacpp --context 8192``: the context a --repo run
    sizes itself to, answered at llama.cpp's own endpoint."""
    from needle_lib.llm import resolve_model
    from needle_lib.llm.server_context import probe_context

    process, text = start_serve("model", "--port", "0", "--server", "llamacpp",
                                "--context", "8192")
    try:
        assert "llamacpp, 8,192-token context" in text
        url = re.search(r"--base-url (\S+)", text)[1]  # type: ignore[index]
        found = probe_context(resolve_model("m", {"base_url": url}))
        assert found is not None and found.loaded == 8192
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=600) == 0
    finally:
        process.kill()
        process.wait()
