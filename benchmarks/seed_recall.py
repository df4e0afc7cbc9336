"""A seed-equivalent recall run: what the seed's ``bench.py run --corpus jquery`` does, in one
script, as the baseline ``benchmarks/recall_vs_seed.py`` times Needle against.

The seed (``/work/shared/seeds/000_*.txt``) is not shipped here, so this script does its
steps as its spec describes them, with nothing of Needle imported (Needle's start-up cost
must not leak into the baseline): read the corpus config (TOML), read ``jquery.js``, parse
it with esprima (the seed parses on every run; it has no parse cache) and collect the named
function definitions with their verbatim signature text, drop the ones whose name *and*
signature repeat, sample k with the config's seed, then for each target send the prompt
(the whole source, then the task quoting the signature) to an OpenAI-compatible server with
one ``httpx.Client``, score the answer by a line LCS against the expected body lines (blank
lines never count), print one line per function, and rewrite the JSON dump atomically after
every query (``in_progress: true``) and once at the end. Comments are parsed too (the seed
reports each window's code/prose composition) and the dump records the corpus hash.

The prompt uses Needle's wording (``needle_lib.recall.prompt``), which is the seed's modulo
punctuation, so the loopback fake (``FakeOpenAIServer``) answers it; requests and answers
are the same size as Needle's. Sampling is simpler than Needle's (``random.sample``), so
the 16 targets may differ; every prompt holds the whole 86K-token corpus either way.

``python benchmarks/seed_recall.py BASE_URL DUMP_PATH [--corpus NAME]``
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import tempfile
import tomllib
from pathlib import Path

import esprima
import httpx

ROOT = Path(__file__).resolve().parent.parent
FUNCTION_TYPES = ("FunctionExpression", "ArrowFunctionExpression")
END_OF_SOURCE = "=== END OF SOURCE ==="


def find_functions(source: str) -> list[dict]:
    """Named definitions: declarations, ``name: function``, ``a.b = function``,
    ``var name = function``. The signature runs from the definition's first line to the line
    that opens the body."""
    lines = source.split("\n")
    found: list[dict] = []

    def record(name: str | None, start_line: int, function) -> None:
        body = function.body
        if name is None or body.type != "BlockStatement":
            return
        open_line = body.loc.start.line
        found.append(
            {
                "name": name,
                "signature": "\n".join(lines[start_line - 1 : open_line]),
                "body": lines[open_line : body.loc.end.line - 1],
                "start_line": start_line,
            }
        )

    def visit(node, _meta) -> None:
        kind = node.type
        if kind == "FunctionDeclaration" and node.id is not None:
            record(node.id.name, node.loc.start.line, node)
        elif kind == "Property" and node.value is not None and node.value.type in FUNCTION_TYPES:
            key = node.key
            record(
                getattr(key, "name", None) or getattr(key, "value", None),
                node.loc.start.line,
                node.value,
            )
        elif kind == "AssignmentExpression" and node.right.type in FUNCTION_TYPES:
            target = node.left
            name = (
                getattr(target.property, "name", None)
                if target.type == "MemberExpression"
                else getattr(target, "name", None)
            )
            record(name, node.loc.start.line, node.right)
        elif (
            kind == "VariableDeclarator"
            and node.init is not None
            and node.init.type in FUNCTION_TYPES
        ):
            record(getattr(node.id, "name", None), node.loc.start.line, node.init)

    tree = esprima.parseScript(source, {"loc": True, "comment": True}, visit)
    comment_lines = {
        line for c in tree.comments for line in range(c.loc.start.line, c.loc.end.line + 1)
    }
    for f in found:  # the composition the seed reports: code vs prose lines of the window
        first = f["start_line"] + f["signature"].count("\n") + 1
        f["prose"] = [first + i in comment_lines for i in range(len(f["body"]))]
    return found


def answerable(functions: list[dict]) -> list[dict]:
    """Drop definitions no prompt can single out: same name and same signature."""
    seen: dict[tuple[str, str], int] = {}
    for f in functions:
        key = (f["name"], f["signature"].strip())
        seen[key] = seen.get(key, 0) + 1
    return [
        f
        for f in functions
        if seen[(f["name"], f["signature"].strip())] == 1
        and any(line.strip() for line in f["body"])
    ]


def prompt(path: str, source: str, target: dict, n: int) -> str:
    quoted = "\n".join("    " + line for line in target["signature"].split("\n"))
    return (
        f"Below is the complete source of `{path}`.\n\n{source.rstrip(chr(10))}\n"
        f"{END_OF_SOURCE}\n\n"
        f"Task: reproduce verbatim the first {n} lines of the body of the function named "
        f"`{target['name']}` in the source above.\n\n"
        f"It is the function introduced by exactly this text:\n\n{quoted}\n\n"
        f"Output the {n} lines that come immediately after it.\n\n"
        f"Rules:\n- Output only those {n} lines: nothing before or after them.\n"
        f"- Keep the original indentation exactly (the same tabs and spaces).\n"
        f"- Keep blank lines where the source has them; each counts as one of the {n} lines.\n"
        f"- No markdown code fences, no line numbers, no commentary."
    )


def lcs_matches(expected: list[str], produced: list[str]) -> int:
    """Expected non-blank lines reproduced in order (blank lines align but never count)."""
    rows = [[0] * (len(produced) + 1) for _ in range(len(expected) + 1)]
    for i, want in enumerate(expected):
        for j, got in enumerate(produced):
            rows[i + 1][j + 1] = (
                rows[i][j] + (1 if want.strip() else 0)
                if want == got
                else max(rows[i][j + 1], rows[i + 1][j])
            )
    return rows[-1][-1]


def write_atomic(path: Path, data: dict) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, path)


def main() -> None:
    base_url, dump_path = sys.argv[1], Path(sys.argv[2])
    corpus_name = sys.argv[sys.argv.index("--corpus") + 1] if "--corpus" in sys.argv else "jquery"
    config = tomllib.loads((ROOT / "configs" / "corpora" / f"{corpus_name}.toml").read_text())
    files = sorted((ROOT / config["files"]["directory"]).glob(config["files"]["glob"]))
    path = files[0]
    source = path.read_text(encoding="utf-8")
    sample = config["sample"]
    n = sample["primary_lines"]
    eligible = sorted(answerable(find_functions(source)), key=lambda f: f["start_line"])
    targets = random.Random(sample["seed"]).sample(eligible, min(sample["k"], len(eligible)))
    dump_path.parent.mkdir(parents=True, exist_ok=True)
    dump = {
        "corpus": corpus_name,
        "corpus_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "model": "seed",
        "in_progress": True,
        "cases": [],
    }
    with httpx.Client(base_url=base_url, timeout=600.0) as client:
        for target in targets:
            response = client.post(
                "/v1/chat/completions",
                json={
                    "model": "seed",
                    "temperature": 0.0,
                    "max_tokens": 6000,
                    "messages": [{"role": "user", "content": prompt(path.name, source, target, n)}],
                },
            )
            response.raise_for_status()
            answer = response.json()["choices"][0]["message"]["content"]
            expected = target["body"][:n]
            scored = sum(1 for line in expected if line.strip())
            matched = lcs_matches(expected, answer.split("\n"))
            passed = scored > 0 and matched / scored >= 0.4
            prose = sum(
                1
                for line, is_prose in zip(expected, target["prose"], strict=False)
                if is_prose and line.strip()
            )
            print(
                f"=== {target['name']}  [{'PASS' if passed else 'FAIL'}]  "
                f"matched={matched}/{scored} ==="
            )
            dump["cases"].append(
                {
                    "name": target["name"],
                    "matched": matched,
                    "scored": scored,
                    "composition": {"code": scored - prose, "prose": prose},
                    "passed": passed,
                    "answer": answer,
                }
            )
            write_atomic(dump_path, dump)
    dump["in_progress"] = False
    write_atomic(dump_path, dump)
    print(f"{sum(c['passed'] for c in dump['cases'])}/{len(dump['cases'])} passed")


if __name__ == "__main__":
    main()
