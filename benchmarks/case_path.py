"""How many files one case passes through: a recall case and a search case (not a test).

Runs ``pytest evals -k http_server`` (the built-in reference model) and ``pytest evals -k
news`` (one query, one zero-latency loopback engine and judge) with ``case_files.py``
loaded, and prints, per kind, the ``needle_lib`` files the first case's code called into
and the plugin modules among them. Point it at another checkout to compare (the plugin's
layout before and after a change): ``uv run python benchmarks/case_path.py [TREE]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
TREE = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else BENCHMARKS.parent
sys.path.insert(0, str(TREE))

from needle_lib.testing.search_server import FakeSearchServer  # noqa: E402


def case_files(kind: str, args: list[str], env: dict[str, str], tmp: Path) -> list[str]:
    out = tmp / f"{kind}.json"
    command = [sys.executable, "-m", "pytest", str(TREE / "evals"), f"--rootdir={TREE}", "-q",
               "-p", "no:cacheprovider", "-p", "case_files", "--results-dir", str(tmp), *args]
    run_env = {**env, "NEEDLE_CASE_FILES_OUT": str(out)}
    done = subprocess.run(command, env=run_env, cwd=TREE, capture_output=True, text=True,
                          check=False, timeout=600)
    if not out.is_file():
        raise SystemExit(f"{kind}: no case ran\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    files: list[str] = json.loads(out.read_text(encoding="utf-8"))
    return files


def main() -> None:
    env = {**os.environ, "PYTHONPATH": f"{TREE}{os.pathsep}{BENCHMARKS}",
           "NEEDLE_CASE_FILES_ROOT": str(TREE / "needle_lib"), "NEEDLE_NO_DOTENV": "1"}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        found = {"recall": case_files("recall", ["-k", "http_server"], env, tmp)}
        queries = tmp / "q.txt"
        queries.write_text("story number 1\n", encoding="utf-8")
        with FakeSearchServer() as server:
            search_env = {**env, **server.env(), "NEEDLE_CACHE_DIR": str(tmp / "cache")}
            found["search"] = case_files(
                "search", ["-k", "news", "--queries", str(queries), "--engines", "exa"],
                search_env, tmp)
    for kind, files in found.items():
        plugin = [f for f in files if f.startswith("plugin")]
        print(f"{kind}: {len(files)} needle_lib files, {len(plugin)} of the plugin")
        print("  " + " ".join(files))


if __name__ == "__main__":
    main()
