"""A corpus made ready to ask about: loaded, parsed (cached), targets selected."""

from __future__ import annotations

from dataclasses import dataclass, replace

from needle_lib.recall.cache import parsed_corpus
from needle_lib.recall.corpus import Corpus, CorpusConfig, SamplePolicy, load_corpus
from needle_lib.recall.extract import ParsedCorpus
from needle_lib.recall.targets import Target, TargetSet, composition, select_targets


@dataclass(frozen=True)
class RecallSuite:
    config: CorpusConfig
    corpus: Corpus
    parsed: ParsedCorpus
    targets: list[Target]
    target_set: TargetSet

    def expected(self, target: Target) -> tuple[list[str], list[str], list[str]]:
        """(primary window, its line kinds, bonus lines) for scoring ``target``."""
        lines = self.corpus.lines
        return (
            target.window(lines),
            target.window_kinds(self.parsed.kinds),
            target.bonus_window(lines),
        )

    def composition(self, target: Target) -> dict[str, int]:
        return composition(target.window_kinds(self.parsed.kinds))


def load_suite(
    config: CorpusConfig,
    *,
    sample: SamplePolicy | None = None,
    functions: list[str] | None = None,
) -> RecallSuite:
    """Load ``config``'s corpus and select targets under ``sample`` (default: the config's)."""
    if sample is not None:
        config = replace(config, sample=sample)
    corpus = load_corpus(config)
    parsed = parsed_corpus(corpus)
    targets, target_set = select_targets(parsed, config.sample, functions)
    return RecallSuite(config, corpus, parsed, targets, target_set)
