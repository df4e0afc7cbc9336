"""Recall cases: what ``pytest evals`` asks (corpus × target × model) and how it asks.

The plan is built once per process from the run's settings and the configs; parsed
corpora come from the on-disk cache, so collection in every xdist worker stays cheap.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TypeVar

from needle_lib.contract.records import CaseIdentity, RecallHeader
from needle_lib.llm import (
    ChatResult,
    ContextOverflowError,
    LLMError,
    ModelConfig,
    make_chat_client,
    resolve_model,
)
from needle_lib.llm.client import ChatClient
from needle_lib.llm.config import check_distinct_keys
from needle_lib.llm.overflow import Overflow, explain_overflow
from needle_lib.llm.request_body import share_prefix
from needle_lib.llm.server_context import probe_context
from needle_lib.names import id_part
from needle_lib.options import RunSettings
from needle_lib.provenance import package_info
from needle_lib.recall import size
from needle_lib.recall.corpus import (
    CorpusConfig,
    ScoringPolicy,
    configured_corpus_names,
    repo_config,
    resolve_corpus,
    single_file_config,
    sized_for,
)
from needle_lib.recall.prompt import build_messages, corpus_preamble
from needle_lib.recall.reference import reference_answer
from needle_lib.recall.repo import KnownContext
from needle_lib.recall.score import Score, score_answer
from needle_lib.recall.store import pair_name
from needle_lib.recall.suite import RecallSuite, load_suite
from needle_lib.recall.targets import Target, UnknownFunction
from needle_lib.tomlconf import ConfigError

T = TypeVar("T")

DEFAULT_MODEL = "reference"
REFERENCE_NOTE = (
    "no --model given: running the built-in `reference` model (a perfect-recall oracle, "
    "served in-process). Point at a real server with --model NAME [--base-url "
    "http://localhost:1234]."
)


@dataclass(frozen=True)
class RecallCase:
    suite: RecallSuite
    target: Target
    model: ModelConfig
    scoring: ScoringPolicy
    no_think: bool

    @property
    def corpus_name(self) -> str:
        return self.suite.config.name

    @property
    def pair(self) -> str:
        """The dump key: one dump per (corpus, model)."""
        return pair_name(self.corpus_name, self.model.key)

    @property
    def id(self) -> str:
        parts = (self.corpus_name, self.target.case_id, self.model.key)
        return "-".join(id_part(part) for part in parts)

    def messages(self) -> list[dict]:
        return build_messages(self.suite.corpus, self.target, no_think=self.no_think)

    @cached_property
    def prompt_tokens(self) -> int:
        """The prompt's size under the reference tokenizer (the server's count may differ)."""
        return size.prompt_tokens(self.suite.corpus, self.target, no_think=self.no_think)

    @property
    def task_tokens(self) -> int:
        """The prompt's part after the corpus preamble every case of the pair shares."""
        return self.prompt_tokens - size.preamble_tokens(self.suite.corpus)

    def score(self, content: str) -> Score:
        expected, kinds, bonus = self.suite.expected(self.target)
        return score_answer(content, expected, kinds, bonus, self.scoring)

    def case_fields(self) -> CaseIdentity:
        function = self.target.function
        return {
            "function": self.target.name,
            "case_id": self.target.case_id,
            "file": function.file,
            "start_line": self.target.start_line,
            "signature": function.signature,
            "prompt_tokens_est": self.prompt_tokens,
        }


@dataclass
class RecallPlan:
    suites: list[RecallSuite]
    models: list[ModelConfig]
    scoring: dict[str, ScoringPolicy]
    no_think: dict[str, bool]
    notes: str
    functions: list[str]
    messages: list[str] = field(default_factory=list)
    #: Corpus → whether this run uses its config's own selection and scoring policy (no
    #: --function, --sample, --seed, --primary-lines, --min-code-lines or policy flag that
    #: changes it): only
    #: such runs may become the pair's latest view in the result store.
    defaults: dict[str, bool] = field(default_factory=dict)
    _headers: dict[str, RecallHeader] = field(default_factory=dict, repr=False)

    @cached_property
    def cases(self) -> list[RecallCase]:
        return [
            RecallCase(
                suite, target, model, self.scoring[suite.config.name], self.no_think[model.key]
            )
            for suite in self.suites
            for model in self.models
            for target in suite.targets
        ]

    def nothing_to_ask(self) -> list[str]:
        """Why each corpus that contributes no case has none (e.g. every function of a
        ``--repo`` is shorter than the window): a run that asks nothing must say why."""
        return [
            f"{suite.config.name}: {reason}"
            for suite in self.suites
            if not suite.targets and (reason := suite.target_set.nothing_to_ask())
        ]

    def keyword_miss(self, expression: str) -> str:
        """Why ``-k expression`` selected none of the recall cases, with the nearest corpus,
        model or function name to a word that matches no case id (``-k jqeury``)."""
        ids = [case.id.lower() for case in self.cases]
        kinds = {
            **{case.target.name: "function" for case in self.cases},
            **{model.key: "model" for model in self.models},
            **{suite.config.name: "corpus" for suite in self.suites},
        }
        words = [w for w in re.findall(r"[\w.\-]+", expression)
                 if w.lower() not in ("and", "or", "not")]
        for word in words:
            if any(word.lower() in case_id for case_id in ids):
                continue
            close = difflib.get_close_matches(word, list(kinds), n=3, cutoff=0.6)
            if close:
                named = " or ".join(f"{name} (a {kinds[name]})" for name in close)
                return f"-k {expression!r} matches no recall case: did you mean {named}?"
        corpora = ", ".join(suite.config.name for suite in self.suites)
        return (f"-k {expression!r} matches none of the {len(ids)} recall case(s), whose ids "
                f"read <corpus>-<function>-<model> (corpora: {corpora})")

    def messages_for(self, case: RecallCase) -> list[str]:
        """Notes to print once at the end of a run that included ``case``."""
        excluded = case.suite.target_set.exclusion_message()
        left_out = case.suite.corpus.left_out_message()
        notes = self.messages + ([left_out] if left_out else []) + self.nothing_to_ask()
        return notes + ([f"{case.corpus_name}: {excluded}"] if excluded else [])

    def header(self, case: RecallCase) -> RecallHeader:
        """The dump header of ``case``'s (corpus, model) pair (built once per pair)."""
        if case.pair not in self._headers:
            self._headers[case.pair] = self._build_header(case)
        return self._headers[case.pair]

    def _build_header(self, case: RecallCase) -> RecallHeader:
        suite = case.suite
        policy = suite.config.sample
        return {
            "corpus": {**suite.corpus.describe(), "config": suite.config.source},
            "model": {
                "key": case.model.key,
                "name": case.model.name,
                "label": case.model.label,
                "request": case.model.request_shape(),
                "no_think_suffix": case.no_think,
            },
            "sampling": {
                "k": policy.k,
                "seed": policy.seed,
                "primary_lines": policy.primary_lines,
                "min_code_lines": policy.min_code_lines,
                "functions": self.functions,
                "eligible": len(suite.target_set.eligible),
                "excluded": sorted({f.name for f in suite.target_set.excluded}),
            },
            "scoring": {
                "count_comments": case.scoring.count_comments,
                "relax_indent": case.scoring.relax_indent,
            },
            "notes": self.notes,
            "package": package_info(),
            "expected_cases": len(suite.targets),
            "default_selection": self.defaults.get(suite.config.name, True),
        }


#: Each model's context as far as it is known (``plugin.collect.known_contexts``: a
#: config's ``context_tokens``, else what its server reports, shared with xdist workers).
Contexts = Callable[[list[ModelConfig]], list[KnownContext]]


def needs_context(corpora: list[CorpusConfig], cli_budget: int | None) -> bool:
    """Whether some corpus's budget depends on the models' contexts."""
    return cli_budget is None and any(
        c.repo is not None and c.repo.max_prompt_tokens is None for c in corpora
    )


def _corpus_configs(settings: RunSettings, models: list[ModelConfig],
                    contexts: Contexts) -> list[CorpusConfig]:
    if settings.file:
        chosen = [single_file_config(settings.file)]
    elif settings.repo:
        chosen = [repo_config(settings.repo)]
    else:
        names = list(settings.corpus) or configured_corpus_names()
        chosen = [resolve_corpus(name) for name in names]
    budget = settings.max_prompt_tokens
    known = contexts(models) if needs_context(chosen, budget) else []
    return [sized_for(c, known, budget) for c in chosen]


def budget_note(suite: RecallSuite) -> str | None:
    """The line that says how large a repo corpus's prompt is and what decided it."""
    snapshot = suite.corpus.repo
    if snapshot is None:
        return None
    return (f"{suite.config.name}: prompt budget {snapshot.budget:,} tokens, set by "
            f"{snapshot.budget_source}")


def build_plan(settings: RunSettings, contexts: Contexts) -> RecallPlan:
    """Resolve corpora, sampling, scoring and models from the configs and the options."""
    suites: list[RecallSuite] = []
    scoring: dict[str, ScoringPolicy] = {}
    defaults: dict[str, bool] = {}
    misses: list[str] = []
    functions = list(settings.function)
    overrides: dict[str, object] = {
        key: value
        for key, value in {
            "base_url": settings.base_url,
            "api_key": settings.api_key,
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            "timeout": settings.request_timeout,
            "concurrency": settings.concurrency,
        }.items()
        if value is not None
    }
    if settings.think:
        overrides["think"] = True
    names = list(settings.model) or [DEFAULT_MODEL]
    models = [resolve_model(name, overrides) for name in names]
    check_distinct_keys(models)
    for corpus_config in _corpus_configs(settings, models, contexts):
        base = corpus_config.sample
        sample = replace(
            base,
            k=_given(settings.sample, base.k),
            seed=_given(settings.seed, base.seed),
            min_code_lines=_given(settings.min_code_lines, base.min_code_lines),
            primary_lines=_given(settings.primary_lines, base.primary_lines),
        )
        try:
            suite = load_suite(corpus_config, sample=sample, functions=functions or None)
        except UnknownFunction as exc:
            misses.append(f"{corpus_config.name}: {exc.args[0]}")
            continue
        suites.append(suite)
        policy = corpus_config.scoring
        chosen = scoring[corpus_config.name] = ScoringPolicy(
            count_comments=_given(settings.count_comments, policy.count_comments),
            relax_indent=_given(settings.relax_indent, policy.relax_indent),
        )
        defaults[corpus_config.name] = (
            sample == base
            and not functions
            and (chosen.count_comments, chosen.relax_indent)
            == (policy.count_comments, policy.relax_indent)
        )
    if functions and not suites:
        raise ConfigError("; ".join(misses))
    messages = [REFERENCE_NOTE] if not settings.model else []
    messages += [m.note for m in models if m.note]
    messages += [note for suite in suites if (note := budget_note(suite))]
    pairs = len(suites) * len(models)
    if settings.dump and pairs > 1:
        raise ConfigError(
            f"--dump names one file, but this run has {pairs} (corpus, model) pairs; "
            "select one corpus (--corpus) and one model, or drop --dump"
        )
    return RecallPlan(
        suites=suites,
        models=models,
        scoring=scoring,
        no_think={m.key: m.suppress_thinking for m in models},
        notes=settings.notes,
        functions=functions,
        messages=messages,
        defaults=defaults,
    )


def _given(option: T | None, configured: T) -> T:
    """An option's value where the command line gave one, else the config's."""
    return configured if option is None else option


class RecallClients:
    """One chat client per model per process, closed at session end."""

    def __init__(self) -> None:
        self._clients: dict[str, ChatClient] = {}

    def get(self, model: ModelConfig) -> ChatClient:
        if model.key not in self._clients:
            self._clients[model.key] = make_chat_client(model, answer=reference_answer)
        return self._clients[model.key]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


def ask(client: ChatClient, case: RecallCase, *, max_tokens: int | None = None) -> ChatResult:
    share_prefix(corpus_preamble(case.suite.corpus))  # every case's prompt starts with it
    return client.complete(
        case.messages(),
        max_tokens=max_tokens,
        prompt_tokens=case.prompt_tokens,
        tail_tokens=case.task_tokens,
    )


#: Answer tokens the preflight asks for: enough to see an answer start.
PREFLIGHT_TOKENS = 16


def overflow_message(case: RecallCase, exc: ContextOverflowError) -> str:
    """The overflow, sized to this corpus and this server: what fits, and the fix to lead
    with. The server is asked (once per process, on this error path only) what it loaded
    and what the model's maximum is, so a model trained on 8K is not told to load 16K."""
    server = probe_context(case.model)
    limit = exc.server_limit or (server.loaded if server else None)
    snapshot = case.suite.corpus.repo
    advice = size.fit_advice(case.prompt_tokens, case.task_tokens, limit,
                             own_code=snapshot is not None,
                             server_count=exc.server_prompt_tokens)
    facts = advice.facts
    if snapshot is not None:
        facts += f"; its budget, {snapshot.budget:,} tokens, was set by {snapshot.budget_source}"
    maximum = (server.maximum, server.maximum_source) if server and server.maximum else None
    detail = explain_overflow(
        Overflow(limit, exc.server_prompt_tokens), model=exc.model,
        estimate=exc.estimated_prompt_tokens, max_tokens=PREFLIGHT_TOKENS,
        first_fix=advice.first_fix, maximum=maximum,
    )
    return f"model {exc.model!r} at {exc.url}: {detail} (server said: {exc.excerpt}); {facts}"


def preflight(client: ChatClient, case: RecallCase) -> str | None:
    """A cheap request with the real prompt shape; the error text when it fails.

    It catches a prompt that does not fit (an overflow, or a server that silently cuts it),
    and on an overflow says which shipped corpora would fit the server's context.
    """
    try:
        ask(client, case, max_tokens=PREFLIGHT_TOKENS)
    except ContextOverflowError as exc:
        return f"preflight for {case.pair} failed: {overflow_message(case, exc)}"
    except (LLMError, ConfigError) as exc:
        return f"preflight for {case.pair} failed: {exc}"
    return None
