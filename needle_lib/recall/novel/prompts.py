"""The prompts a run sends about a novel corpus, and their size in tokens.

The size rule is about the *whole* prompt (preamble, corpus text and task), because that is
what has to fit the model's context. So the generator measures the very text
``needle_lib.recall.prompt`` builds, for targets built from the placements it made; a test
checks those targets equal what the extractor finds in the shipped files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from needle_lib.recall.corpus import Corpus, CorpusFile, display_path
from needle_lib.recall.extract import FunctionDef
from needle_lib.recall.novel.pieces import PRIMARY_LINES
from needle_lib.recall.size import PromptTokens, prompt_range
from needle_lib.recall.targets import Target
from needle_lib.tokens import REFERENCE

if TYPE_CHECKING:
    from needle_lib.recall.novel.corpus import NovelCorpus


def recall_view(corpus: NovelCorpus) -> tuple[Corpus, list[Target]]:
    """The corpus and its 18 targets as a recall run sees them (the prompt names the file
    by its shipped path from the repo root)."""
    language = corpus.flavour.syntax.language
    path = display_path(corpus.flavour.directory / corpus.filename)
    file = CorpusFile(path, 1, corpus.line_count, language)
    view = Corpus(corpus.name, language, corpus.text, (file,))
    lines = view.lines
    targets = [
        Target(
            FunctionDef(
                name=placement.name,
                file=path,
                signature=lines[placement.def_line - 1],
                signature_line=placement.def_line,
                body_start=placement.start_line,
                body_end=placement.start_line + placement.body_lines - 1,
                language=language,
            ),
            PRIMARY_LINES,
            placement.name,
        )
        for placement in corpus.targets
    ]
    return view, targets


def prompt_tokens(corpus: NovelCorpus, tokenizer: str = REFERENCE) -> PromptTokens:
    """Token counts of the corpus's shortest and longest prompt."""
    view, targets = recall_view(corpus)
    return prompt_range(view, targets, tokenizer)
