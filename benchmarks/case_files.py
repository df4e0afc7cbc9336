"""How many of Needle's source files one recall case and one search case pass through.

A measure of how spread out the run machinery is (issue 33 set the goal of fewer): each
run selects exactly one case and ``benchmarks/case_probe.py`` notes every ``needle_lib``
file whose functions run from the end of collection to the end of the session (asking,
scoring, recording, dumps or reports, the terminal summary). The recall case is one jQuery
target against the built-in reference model; the search case is one news query on one
loopback engine with the loopback judge.

Run: ``uv run python benchmarks/case_files.py [--list]`` (``--list`` prints the files).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import check_exit, pytest_process  # noqa: E402

from needle_lib.testing.search_server import FakeSearchServer  # noqa: E402


def files_of_run(args: list[str], env: dict[str, str], out: Path) -> list[str]:
    probe_env = {**env, "NEEDLE_CASE_PROBE_OUT": str(out),
                 "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks"),
                                                os.environ.get("PYTHONPATH", "")])}
    with pytest_process([*args, "-p", "case_probe"], probe_env) as proc:
        stdout, stderr = proc.communicate()
    check_exit(proc.returncode, stdout + stderr)
    if not re.search(r"^1 (passed|failed)(, \d+ deselected)? in ", stdout, re.M):
        raise SystemExit(f"expected exactly one case to run:\n{stdout[-2000:]}")
    return [str(Path(p).relative_to(ROOT)) for p in out.read_text().split()]


def recall_case(tmp: Path) -> list[str]:
    return files_of_run(
        ["evals", "--corpus", "jquery", "-k", "jquery and not test_search", "--sample", "1",
         "--results-dir", str(tmp / "recall"), "--html", str(tmp / "recall.html")],
        {"NEEDLE_CACHE_DIR": str(tmp / "cache")}, tmp / "recall.txt")


def search_case(tmp: Path) -> list[str]:
    queries = tmp / "queries.txt"
    queries.write_text("one benchmark query\n")
    with FakeSearchServer() as server:
        return files_of_run(
            ["evals", "-k", "news", "--queries", str(queries), "--engines", "exa",
             "--results-dir", str(tmp / "search"), "--html", str(tmp / "search.html")],
            {**server.env(), "NEEDLE_CACHE_DIR": str(tmp / "cache")}, tmp / "search.txt")


def describe(kind: str, files: list[str]) -> str:
    by_package = Counter(str(Path(f).parent) for f in files)
    parts = ", ".join(f"{p} {n}" for p, n in sorted(by_package.items(), key=lambda x: -x[1]))
    return f"{kind} case: {len(files)} files ({parts})"


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        runs = {"one recall": recall_case(tmp), "one search": search_case(tmp)}
    for kind, files in runs.items():
        print(describe(kind, files))
        if "--list" in sys.argv:
            print("".join(f"  {f}\n" for f in files), end="")


if __name__ == "__main__":
    main()
