"""The built-in ``reference`` model: a perfect-recall oracle that answers from the corpus.

It reads the prompt exactly as a real model does — the source text and the quoted signature —
and answers with the lines that follow the signature in that text. It is served through the
normal HTTP client path (see ``needle_lib.llm.reference``), so a run against it exercises
prompts, requests, parsing, scoring and dumps end to end without a model server.
"""

from __future__ import annotations

from needle_lib.recall.corpus import split_lines
from needle_lib.recall.prompt import parse_prompt


def reference_answer(messages: list[dict]) -> str:
    prompt = "".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    asked = parse_prompt(prompt)
    lines = split_lines(asked.source)
    signature = split_lines(asked.signature)
    start = _section_start(lines, asked.file)
    for index in range(start, len(lines) - len(signature) + 1):
        if lines[index : index + len(signature)] == signature:
            first = index + len(signature)
            return "\n".join(lines[first : first + asked.lines])
    raise ValueError("reference model: the quoted signature does not occur in the source")


def _section_start(lines: list[str], file: str | None) -> int:
    """In a multi-file corpus, search from the named file's header on."""
    if file is None:
        return 0
    for index, line in enumerate(lines):
        if line.endswith(f"====== {file} ======"):
            return index + 1
    raise ValueError(f"reference model: no file {file!r} in the source")
