"""Re-score a dump's stored responses under another scoring policy, without asking again.

Targets are found again in the corpus by start line, after checking the corpus text is the
one the dump was made from (sha256): re-scoring against edited source would silently
change the expected lines.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

from needle_lib.contract.outcome import NOTHING_TO_SCORE, Outcome, is_answered, scored_outcome
from needle_lib.contract.records import RecallDump
from needle_lib.recall.cache import parsed_corpus
from needle_lib.recall.corpus import (
    Corpus,
    CorpusConfig,
    ScoringPolicy,
    load_corpus,
    recorded_repo_corpus,
    resolve_corpus,
    single_file_config,
)
from needle_lib.recall.results import finalize, score_fields
from needle_lib.recall.score import score_answer
from needle_lib.recall.targets import find_targets
from needle_lib.tomlconf import ConfigError


def dump_corpus(dump: RecallDump, name: str | None = None) -> CorpusConfig | Corpus:
    """The corpus a dump was made from: ``name`` (a config) when given, else the config,
    ``--repo`` files or ``--file`` the dump records, else its corpus name."""
    if name:
        return resolve_corpus(name)
    source = dump["corpus"].get("config", "")
    if source.startswith("repo:") and "repo" in dump["corpus"]:
        return recorded_repo_corpus(dump["corpus"])  # no config: the dump records the files
    if source.startswith("file:"):
        return single_file_config(source.removeprefix("file:"))
    if source and Path(source).is_file():
        return resolve_corpus(source)
    return resolve_corpus(dump["corpus"]["name"])


def policy_of(dump: RecallDump) -> ScoringPolicy:
    """The scoring policy a dump's cases were scored under."""
    scoring = dump["scoring"]
    return ScoringPolicy(count_comments=scoring["count_comments"],
                         relax_indent=scoring["relax_indent"])


def rescore_dump(
    dump: RecallDump, config: CorpusConfig | Corpus, policy: ScoringPolicy
) -> tuple[RecallDump, dict[str, list[list[str]]]]:
    """The dump re-scored under ``policy``, and each case's diff keyed by case_id.
    ``config`` is the corpus config to load, or the corpus itself (a ``--repo`` dump's,
    rebuilt from what it recorded)."""
    if dump.get("benchmark", "recall") != "recall":
        raise ConfigError(f"not a recall dump (benchmark={dump.get('benchmark')!r})")
    sampling = dump["sampling"]
    corpus = config if isinstance(config, Corpus) else load_corpus(replace(
        config, sample=replace(config.sample, primary_lines=sampling["primary_lines"])))
    if corpus.sha256 != dump["corpus"]["sha256"]:
        raise ConfigError(
            f"corpus {corpus.name!r} is not the text this dump was made from "
            f"(sha256 {corpus.sha256[:12]}… now vs {dump['corpus']['sha256'][:12]}… in the dump)"
        )
    parsed = parsed_corpus(corpus)
    by_line = {t.start_line: t for t in find_targets(parsed, sampling["primary_lines"]).eligible}
    lines = corpus.lines
    out = copy.deepcopy(dump)
    out["scoring"] = {"count_comments": policy.count_comments,
                      "relax_indent": policy.relax_indent}
    out["rescored_from"] = dump["scoring"]
    diffs: dict[str, list[list[str]]] = {}
    for index, case in enumerate(out["cases"]):
        if not is_answered(case):
            continue
        target = by_line.get(case["start_line"])
        if target is None or target.name != case["function"]:
            raise ConfigError(
                f"case {case['case_id']}: no target {case['function']!r} at line "
                f"{case['start_line']} in corpus {corpus.name!r}"
            )
        score = score_answer(
            case["response"] or "",
            target.window(lines),
            target.window_kinds(parsed.kinds),
            target.bonus_window(lines),
            policy,
        )
        outcome = scored_outcome(score.scored, score.passed)
        # the case's keys stay where they were; the score's and the verdict's are the new ones
        out["cases"][index] = {
            **case, **score_fields(score), "outcome": outcome,
            "skip_reason": NOTHING_TO_SCORE if outcome is Outcome.SKIPPED else None}
        diffs[case["case_id"]] = [d.to_json() for d in score.diff]
    return finalize(out, in_progress=dump.get("in_progress", False)), diffs
