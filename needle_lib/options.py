"""Command-line options of ``pytest evals``: shared run options first, then per benchmark,
and ``RunSettings``, their typed values.

Light to import (no pytest, nothing of ``needle_lib.plugin``): the plugin registers them,
hints at the nearest one when a name is mistyped, and builds one ``RunSettings`` at
configure that everything else reads.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from importlib.util import find_spec
from typing import Any, Protocol

import msgspec

from needle_lib.argtypes import Shard, parse_shard, positive_int
from needle_lib.benches.registry import BENCH_NAMES

#: Old spellings of renamed options, each with the plugin module that owns the name when it
#: is installed: the alias is registered only where it cannot collide with that plugin.
RENAMED = {"--timeout": ("--request-timeout", "pytest_timeout")}
SHARD_BY = ("pair", "case")


class OptionGroup(Protocol):
    def addoption(self, *names: str, **attrs: Any) -> None: ...


class OptionParser(Protocol):
    """What ``add_options`` needs of pytest's parser (``pytest.Parser`` is one)."""

    def getgroup(self, name: str, description: str = "") -> OptionGroup: ...


class _Names:
    """An ``OptionParser`` that records the names of the options."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def getgroup(self, name: str, description: str = "") -> _Names:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.names.update(names)


def _likeness(typed: str, known: str) -> tuple[float, int, float]:
    """How likely ``known`` is what ``typed`` meant, best last: difflib's ratio, raised to
    0.8 when they share a 4-letter stem (``corpora``/``corpus``, whose ratio is only 0.6),
    then the longer shared stem (``max-prompt`` → ``max-prompt-tokens``, not ``max-tokens``)."""
    ratio = difflib.SequenceMatcher(None, typed, known).ratio()
    stem = len(os.path.commonprefix([typed, known]))  # noqa: RUF071 (characters)
    return (max(ratio, 0.8) if stem >= 4 else ratio), stem, ratio


def mistyped_options(args: Sequence[str], unknown: Callable[[str], bool]) -> list[str]:
    """A hint for each ``--option`` in ``args`` that ``unknown`` (pytest's parser) does not
    know and that is close to one of Needle's (``--corpora`` → ``--corpus``). pytest's own
    error only says "unrecognized arguments"."""
    recorder = _Names()
    add_options(recorder)
    hints = []
    for arg in args:
        name = arg.split("=", 1)[0]
        if not name.startswith("--") or name in recorder.names or not unknown(name):
            continue
        likeness, best = max((_likeness(name[2:], known[2:]), known)
                             for known in recorder.names)
        if likeness[0] >= 0.75:
            hints.append(f"{name} is not an option: did you mean {best}?")
    return hints


def add_options(parser: OptionParser) -> None:
    run = parser.getgroup("needle", "Needle evaluation runs")
    run.addoption("--notes", default="", help="free text recorded in every dump (server, quant…)")
    run.addoption("--results-dir", default=None, help="where dumps go (default: results/)")
    run.addoption("--dump", default=None, help="recall dump path for a single (corpus, model) run")
    run.addoption(
        "--no-color",
        action="store_true",
        default=False,
        help="never colour diffs (pytest's --color=yes forces colour)",
    )
    run.addoption(
        "--sample",
        type=positive_int,
        default=None,
        help="how many targets/queries to sample (at least 1)",
    )
    run.addoption("--seed", type=int, default=None, help="sampling seed")
    run.addoption(
        "--resume",
        action="store_true",
        default=False,
        help="reuse the answered cases of the newest earlier run of the same "
        "setup (recall dump; search report, or journal of a killed run); "
        "ask only the rest",
    )
    run.addoption(
        "--max-consecutive-errors",
        type=int,
        default=2,
        help="fail-fast: skip a model's remaining cases after N consecutive "
        "infrastructure errors (0 = never)",
    )
    run.addoption(
        "--shard",
        type=parse_shard,
        default=None,
        metavar="I/N",
        help="run only shard I of N (1-based) of the collected cases (search "
        "cases split by query), for one run over N machines; see `needle merge`",
    )
    run.addoption(
        "--shard-by",
        choices=SHARD_BY,
        default="pair",
        help="pair (default): whole (corpus, model) pairs per shard, each a complete "
        "dump; case: split pairs too, each shard writing a dump part",
    )

    gates = parser.getgroup("needle-gates", "Needle CI gates (exit status)")
    gates.addoption(
        "--min-score",
        type=float,
        default=None,
        help="fail unless matched/scored over valid cases is at least X (0..1)",
    )
    gates.addoption(
        "--min-pass-rate",
        type=float,
        default=None,
        help="fail unless the fraction of valid cases passed is at least X (0..1)",
    )
    gates.addoption(
        "--baseline",
        default=None,
        metavar="DUMP",
        help="fail on cases that passed in this dump and fail now",
    )
    gates.addoption(
        "--max-drop",
        type=float,
        default=1.0,
        metavar="POINTS",
        help="with --baseline: allowed drop of matched %% in points (default 1)",
    )

    search = parser.getgroup("needle-search", f"Needle search retrieval ({', '.join(BENCH_NAMES)})")
    search.addoption(
        "--queries",
        default=None,
        metavar="PATH",
        help="JSONL gold rows (query_id, query, …) or one query per line",
    )
    search.addoption(
        "--report",
        default=None,
        metavar="PATH",
        help="search report path for a single bench's run (default: "
        "results/search/<bench>__<queries>__<time>.json)",
    )
    search.addoption(
        "--engines",
        default=None,
        help="comma-separated engines (default: keenable,exa; see `needle engines`)",
    )
    search.addoption(
        "--skip-missing-keys",
        action="store_true",
        default=False,
        help="skip engines named in --engines whose API key is unset (default: "
        "a usage error, so a missing secret never passes as a green run)",
    )
    search.addoption(
        "--num-results",
        type=int,
        default=None,
        help="top-K fetched per engine (default: the bench's, 5; scholar 10)",
    )
    search.addoption(
        "--snippet-chars",
        type=int,
        default=2000,
        help="uniform cap on per-result evidence text (0 = no cap)",
    )
    search.addoption("--limit", type=int, default=None, help="use at most N queries")
    search.addoption(
        "--judge-model",
        default=None,
        help="relevance judge model (default: $NEEDLE_JUDGE_MODEL or "
        "openai/gpt-5.6-terra via OpenRouter)",
    )
    search.addoption(
        "--judge-concurrency",
        type=positive_int,
        default=8,
        help="judge calls in flight at once, across the whole run (xdist workers included)",
    )
    search.addoption(
        "--search-lookahead",
        type=positive_int,
        default=8,
        metavar="N",
        help="cases per engine searched (and judged) ahead of the case being "
        "run, one search in flight per engine (1 = one case at a time)",
    )
    search.addoption(
        "--judge",
        action="store_true",
        default=False,
        help="known-item benches: ask the judge model about results ranked above "
        "the first deterministic hit (it can add a hit, never remove one)",
    )

    recall = parser.getgroup("needle-recall", "Needle positional recall")
    recall.addoption(
        "--model",
        action="append",
        default=[],
        help="model config name, config path or raw model id (repeatable)",
    )
    recall.addoption(
        "--corpus",
        action="append",
        default=[],
        help="corpus config name (repeatable; default: every configured corpus)",
    )
    recall.addoption("--base-url", default=None, help="override the model's server URL")
    recall.addoption("--api-key", default=None, help="override the model's API key")
    recall.addoption("--max-tokens", type=int, default=None)
    recall.addoption("--temperature", type=float, default=None)
    recall.addoption(
        *_spellings("--request-timeout"),
        type=float,
        default=None,
        dest="request_timeout",
        help="per-attempt deadline (s): the whole response must arrive within it",
    )
    recall.addoption(
        "--concurrency",
        type=positive_int,
        default=None,
        metavar="N",
        help="requests of a (corpus, model) pair in flight at once from one "
        "process (default: the model config's `concurrency`, else 1)",
    )
    recall.addoption(
        "--think",
        action="store_true",
        default=False,
        help="leave chain-of-thought on (undo suppress_thinking/prefill_no_think)",
    )
    recall.addoption(
        "--function",
        action="append",
        default=[],
        help="ask about these functions only (repeatable; skips sampling)",
    )
    recall.addoption("--file", default=None, help="single-file mode: a source file, no config")
    recall.addoption(
        "--repo",
        default=None,
        metavar="PATH",
        help="a corpus from this git checkout (files .gitignore keeps out are "
        "left out), sized to --max-prompt-tokens",
    )
    recall.addoption(
        "--max-prompt-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="prompt budget of a --repo / [repo] corpus (default: the smallest model "
        "context less 2,048 — a config's `context_tokens`, else what the model's server "
        "reports — else 30,720)",
    )
    recall.addoption(
        "--primary-lines",
        type=positive_int,
        default=None,
        metavar="N",
        help="ask for the first N body lines of each function; only functions with at "
        "least N body lines are asked about (default: the corpus config's, else 20)",
    )
    recall.addoption(
        "--min-code-lines",
        type=int,
        default=None,
        help="drop targets with fewer code lines in their window",
    )
    recall.addoption(
        "--relax-indent",
        action="store_const",
        const=True,
        dest="relax_indent",
        default=None,
        help="score content, ignoring leading whitespace",
    )
    recall.addoption(
        "--strict-indent",
        action="store_const",
        const=False,
        dest="relax_indent",
        help="score verbatim (the default)",
    )
    recall.addoption(
        "--no-comments",
        action="store_const",
        const=False,
        dest="count_comments",
        default=None,
        help="score code lines only",
    )
    recall.addoption(
        "--count-comments",
        action="store_const",
        const=True,
        dest="count_comments",
        help="comments and docstrings earn credit (default)",
    )


def _spellings(name: str) -> list[str]:
    """``name`` plus its old spellings that no installed plugin claims (pytest-timeout
    owns ``--timeout``; registering it too would crash every pytest run)."""
    return [name] + [
        old for old, (new, owner) in RENAMED.items() if new == name and find_spec(owner) is None
    ]


@dataclass(frozen=True)
class RunSettings:
    """Every option a run was given, typed, read once at configure.

    Why one record: the plugin's modules and the planners under it read the options they
    need from here instead of asking pytest by name, so a renamed option is a type error
    in one place, and the planners (``recall.plan``, ``benches.plan``) need no pytest.
    Field names are the options' ``dest`` names (``tests/test_run_settings.py`` checks that
    every option of ``add_options`` has one). The last three are pytest's own.
    """

    notes: str
    results_dir: str | None
    dump: str | None
    no_color: bool
    sample: int | None
    seed: int | None
    resume: bool
    max_consecutive_errors: int
    shard: Shard | None
    shard_by: str
    min_score: float | None
    min_pass_rate: float | None
    baseline: str | None
    max_drop: float
    queries: str | None
    report: str | None
    engines: str | None
    skip_missing_keys: bool
    num_results: int | None
    snippet_chars: int
    limit: int | None
    judge_model: str | None
    judge_concurrency: int
    search_lookahead: int
    judge: bool
    model: tuple[str, ...]
    corpus: tuple[str, ...]
    base_url: str | None
    api_key: str | None
    max_tokens: int | None
    temperature: float | None
    request_timeout: float | None
    concurrency: int | None
    think: bool
    function: tuple[str, ...]
    file: str | None
    repo: str | None
    max_prompt_tokens: int | None
    primary_lines: int | None
    min_code_lines: int | None
    relax_indent: bool | None
    count_comments: bool | None
    #: pytest's ``-k`` expression ("" when none)
    keyword: str = ""
    #: pytest's ``--collect-only``
    collectonly: bool = False
    #: pytest's ``--color`` (``auto``, ``yes`` or ``no``)
    color: str = "auto"

    @classmethod
    def from_namespace(cls, namespace: object) -> RunSettings:
        """The settings of a parsed command line (pytest's ``config.option``), checked
        against the field types (a mismatch is a bug in ``add_options``); repeatable
        options become tuples, so the record stays immutable."""
        values = {field.name: getattr(namespace, field.name, field.default)
                  for field in fields(cls)}
        return msgspec.convert(values, cls)

    @property
    def searching(self) -> bool:
        """Whether the run names search inputs (a query set or engines)."""
        return bool(self.queries or self.engines)

    @property
    def has_query_set(self) -> bool:
        """Whether the run can have search cases: only a query set (``--queries``) makes
        them. Without one, the search half of the plugin is neither registered nor imported."""
        return bool(self.queries)

    @property
    def writes_parts(self) -> bool:
        """``--shard-by case``: each shard writes a dump part of a pair, not the pair's dump."""
        return self.shard is not None and self.shard_by == "case"
