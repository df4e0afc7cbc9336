"""Reading recall dumps for charts: validation, staleness, run status and scoring cohorts.

A dump is only chartable when it was produced by the current prompt and scorer: a dump-schema
number cannot prove two models saw the same question or were scored under the same rules, so
a version mismatch makes the dump *stale* and it is left out rather than misread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from needle_lib.contract.outcome import is_scored
from needle_lib.contract.records import RecallCaseRecord, RecallDump
from needle_lib.contract.schema import (
    SchemaError,
    validate_recall_dump,
)
from needle_lib.jsonio import JSONObject
from needle_lib.metrics.bootstrap import Interval, bootstrap_proportion, bootstrap_ratio
from needle_lib.names import is_plain
from needle_lib.recall.journal import read_dump, read_recall_run
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.results import (
    INCOMPLETE_STATUS,
    INVALID_STATUS,
    PASSED,
    summarize,
)
from needle_lib.recall.score import SCORER_VERSION

CURRENT_VERSIONS = {"prompt_version": PROMPT_VERSION, "scorer_version": SCORER_VERSION}
DEFAULT_SCORING = {"count_comments": True, "relax_indent": False}


@dataclass(frozen=True, order=True)
class Cohort:
    """Runs that may share a leaderboard: same corpus text, same scoring policy.

    Scores under ``relax_indent`` or without comments measure something else, so ranking them
    next to default-policy runs would reward the policy, not the model.
    """

    corpus: str
    sha256: str
    count_comments: bool
    relax_indent: bool

    @property
    def default_policy(self) -> bool:
        return (self.count_comments, self.relax_indent) == (
            DEFAULT_SCORING["count_comments"], DEFAULT_SCORING["relax_indent"])

    @property
    def policy(self) -> str:
        """``default`` or the non-default knobs, e.g. ``relax-indent, no-comments``."""
        knobs = (["relax-indent"] if self.relax_indent else []) + (
            [] if self.count_comments else ["no-comments"])
        return ", ".join(knobs) or "default"


@dataclass
class Run:
    """One recall dump, validated, with its summary recomputed from the cases."""

    path: Path
    dump: RecallDump

    @property
    def label(self) -> str:
        return str(self.dump["model"].get("label") or self.dump["model"]["key"])

    @property
    def model_key(self) -> str:
        return str(self.dump["model"]["key"])

    @property
    def corpus(self) -> str:
        return str(self.dump["corpus"]["name"])

    @property
    def cohort(self) -> Cohort:
        scoring = self.dump["scoring"]
        return Cohort(self.corpus, str(self.dump["corpus"]["sha256"]),
                      bool(scoring["count_comments"]), bool(scoring["relax_indent"]))

    @property
    def request(self) -> Mapping[str, object]:
        """The request shape the run sent its server (its ``model.request``; empty for a
        dump that records none)."""
        request = self.dump["model"].get("request")
        return request if isinstance(request, dict) else {}

    @property
    def cases(self) -> list[RecallCaseRecord]:
        return self.dump["cases"]

    @property
    def valid_cases(self) -> list[RecallCaseRecord]:
        """Cases the model answered; errors and skips say nothing about its quality."""
        return [c for c in self.cases if is_scored(c["outcome"])]

    @property
    def measured_prompt_tokens(self) -> int | None:
        """The median prompt size the server reported; None for servers (and older dumps)
        without usage. The model's own tokenizer counted it: the context it really used."""
        return self.summary["prompt_tokens"]["served"]

    @cached_property
    def summary(self) -> dict[str, Any]:
        # a plain dict, not RecallSummary: charts.composition_figure reads its keys by name
        # in a loop, which a TypedDict only allows for literal keys
        return dict(summarize(self.cases, self.dump.get("expected_cases", len(self.cases))))

    @property
    def incomplete(self) -> bool:
        """Mid-run or cut short (fail-fast, skips): its figures are not a full result."""
        return bool(self.dump["in_progress"]) or not self.dump["complete"]

    @property
    def valid(self) -> bool:
        """False when any case errored: the run must be re-run before it can rank."""
        return bool(self.dump["valid"]) and self.summary["errors"] == 0

    @property
    def eligible(self) -> bool:
        return self.valid and not self.incomplete

    @property
    def status(self) -> str:
        """The flags charts print next to the label."""
        flags = []
        if self.incomplete:
            flags.append(INCOMPLETE_STATUS)
        if not self.valid:
            flags.append(f"{INVALID_STATUS} ({self.summary['errors']} error(s))")
        return " ".join(flags)

    @property
    def rank_tier(self) -> int:
        """0 complete and valid, 1 valid but incomplete, 2 invalid: ranked in that order."""
        return 2 if not self.valid else int(self.incomplete)

    @cached_property
    def matched_interval(self) -> Interval | None:
        """Matched % with its 95 % bootstrap interval, in percent; None without scored lines."""
        cases = self.valid_cases
        scored = [lines_scored(c) for c in cases]
        if not sum(scored):
            return None
        return bootstrap_ratio([lines_matched(c) for c in cases], scored).scaled(100)

    @cached_property
    def pass_interval(self) -> Interval | None:
        """Pass rate with its 95 % bootstrap interval, in percent; None without valid cases."""
        cases = self.valid_cases
        if not cases:
            return None
        return bootstrap_proportion([c["outcome"] == PASSED for c in cases]).scaled(100)


def lines_matched(case: RecallCaseRecord) -> int:
    """A scored case's matched lines (the schema requires them of a passed or failed case;
    0 for one without a score)."""
    return case["matched"] or 0


def lines_scored(case: RecallCaseRecord) -> int:
    """A scored case's lines scored under its policy (0 for one without a score)."""
    return case["scored"] or 0


def stale_reasons(dump: RecallDump | JSONObject) -> list[str]:
    """Why a dump cannot be charted against current runs (empty when it can); ``dump`` may
    be one not yet validated (a stale dump is noted as such, not as unreadable)."""
    found = {"prompt_version": dump.get("prompt_version"),
             "scorer_version": dump.get("scorer_version")}
    return [f"{key} {found[key]!r} ≠ current {current!r}"
            for key, current in CURRENT_VERSIONS.items() if found[key] != current]


def parse_run(path: Path, dump: Any) -> Run:
    """Validate ``dump`` (read from ``path``) as a recall dump; errors name file and case.
    Its corpus name names dashboard pages, so it must be a plain name too."""
    checked = validate_recall_dump(path, dump)
    if not is_plain(checked["corpus"]["name"]):
        raise SchemaError(f"{path}: corpus name {checked['corpus']['name']!r} is not a plain "
                        "name (it names dashboard pages); refusing a tampered dump")
    return Run(path, checked)


def load_run(path: Path) -> Run:
    """A recall dump from disk, validated (staleness is the caller's decision)."""
    return parse_run(path, read_recall_run(path))


@dataclass
class Scan:
    """Everything found in a results directory, sorted into chartable runs and notes."""

    runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def scan_results(directory: Path) -> Scan:
    """Load every ``*.json`` dump directly under ``directory``.

    Stale and unreadable dumps are left out with a note each, so one broken file never hides
    the rest of the dashboard. Dumps of other benchmarks (search) are skipped silently.
    """
    scan = Scan()
    for path in sorted(directory.glob("*.json")):
        try:
            dump = read_dump(path)
            if not isinstance(dump, dict) or dump.get("benchmark") != "recall":
                continue
            reasons = stale_reasons(dump)
            if reasons:
                scan.notes.append(f"stale, left out (re-run it): {path.name}: "
                                  + "; ".join(reasons))
                continue
            scan.runs.append(parse_run(path, dump))
        except SchemaError as exc:
            scan.notes.append(f"unreadable, left out: {exc}")
    return scan
