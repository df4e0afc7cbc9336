"""The recall prompt, and its inverse for the built-in reference model.

The corpus comes first and the task last, so every case of a corpus shares one long prefix
and a server's prefix (KV) cache serves all but the first case. The target is identified by
its own signature text quoted verbatim, never by a constructed ``function <name>(``, which
does not exist for property- or assignment-style definitions. Any change to the wording
must bump ``PROMPT_VERSION``: dumps from different wordings are not comparable.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from needle_lib.recall.corpus import Corpus
from needle_lib.recall.targets import Target

PROMPT_VERSION = "needle-recall-2"

END_OF_SOURCE = "=== END OF SOURCE ==="
NO_THINK = " /no_think"
_QUOTE_INDENT = "    "


def corpus_preamble(corpus: Corpus) -> str:
    """The shared prefix of every prompt of ``corpus``."""
    if corpus.multi_file:
        head = (
            f"Below are {len(corpus.files)} source files, concatenated; each starts with a "
            f"'====== path ======' comment line."
        )
    else:
        head = f"Below is the complete source of `{corpus.files[0].path}`."
    return f"{head}\n\n{corpus.text.rstrip(chr(10))}\n{END_OF_SOURCE}\n\n"


def build_prompt(corpus: Corpus, target: Target, *, no_think: bool = False) -> str:
    return corpus_preamble(corpus) + task_text(corpus, target, no_think=no_think)


def task_text(corpus: Corpus, target: Target, *, no_think: bool = False) -> str:
    """What follows the shared preamble: the question about ``target``."""
    n = target.primary_lines
    where = f" in the file `{target.function.file}`" if corpus.multi_file else ""
    quoted = textwrap.indent(target.function.signature, _QUOTE_INDENT)
    task = (
        f"Task: reproduce verbatim the first {n} lines of the body of the function named "
        f"`{target.name}`{where} in the source above.\n\n"
        f"It is the function introduced by exactly this text:\n\n"
        f"{quoted}\n\n"
        f"Output the {n} lines that come immediately after it.\n\n"
        f"Rules:\n"
        f"- Output only those {n} lines: nothing before or after them.\n"
        f"- Keep the original indentation exactly (the same tabs and spaces).\n"
        f"- Keep blank lines where the source has them; each counts as one of the {n} lines.\n"
        f"- No markdown code fences, no line numbers, no commentary."
    )
    return task + (NO_THINK if no_think else "")


def build_messages(corpus: Corpus, target: Target, *, no_think: bool = False) -> list[dict]:
    return [{"role": "user", "content": build_prompt(corpus, target, no_think=no_think)}]


@dataclass(frozen=True)
class ParsedPrompt:
    source: str
    signature: str
    lines: int
    file: str | None


_TASK = re.compile(
    r"\n" + re.escape(END_OF_SOURCE) + r"\n\nTask: reproduce verbatim the first (?P<n>\d+) lines "
    r"of the body of the function named `[^\n]*?`(?: in the file `(?P<file>[^`\n]+)`)? "
    r"in the source above\.\n\nIt is the function introduced by exactly this text:\n\n"
    r"(?P<quoted>.*?)\n\nOutput the ",
    re.DOTALL,
)


def parse_prompt(prompt: str) -> ParsedPrompt:
    """Recover what a recall prompt asks for; ``ValueError`` when it is not one."""
    match = _TASK.search(prompt)
    if match is None:
        raise ValueError("not a Needle recall prompt (prompt format changed or foreign request)")
    head_end = prompt.index("\n\n") + 2
    quoted = [line.removeprefix(_QUOTE_INDENT) for line in match["quoted"].split("\n")]
    return ParsedPrompt(
        source=prompt[head_end : match.start() + 1],
        signature="\n".join(quoted),
        lines=int(match["n"]),
        file=match["file"],
    )
