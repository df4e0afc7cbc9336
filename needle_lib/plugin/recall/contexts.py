"""The models' contexts a run sizes its ``--repo`` / ``[repo]`` corpora to.

A model config's ``context_tokens`` says it; otherwise the model's server is asked
(``llm.server_context``). The controller asks, once per (server, model), and only when a
budget depends on the answer (a repo corpus without ``--max-prompt-tokens`` or its own
``max_prompt_tokens``); xdist workers receive the answers instead of asking again, so every
process builds the same corpus and collects the same cases.
"""

from __future__ import annotations

from typing import Any

import pytest

from needle_lib.llm import ModelConfig
from needle_lib.llm.server_context import ServerContext, ServerContextJSON, probe_context
from needle_lib.recall.corpus import CorpusConfig
from needle_lib.recall.repo import KnownContext

CONTEXTS_KEY = "needle_model_contexts"
contexts_key = pytest.StashKey[dict[str, ServerContextJSON | None]]()


def needs_context(corpora: list[CorpusConfig], cli_budget: int | None) -> bool:
    """Whether some corpus's budget depends on the models' contexts."""
    return cli_budget is None and any(
        c.repo is not None and c.repo.max_prompt_tokens is None for c in corpora
    )


def _probed(config: pytest.Config, model: ModelConfig) -> ServerContext | None:
    """The server's answer for ``model``: from the controller (workers), else asked now."""
    cache = config.stash.setdefault(contexts_key, {})
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and model.key not in cache:
        shared = workerinput.get(CONTEXTS_KEY, {})
        cache[model.key] = shared.get(model.key)
    if model.key not in cache:
        found = probe_context(model)
        cache[model.key] = found.to_json() if found else None
    answer = cache[model.key]
    return ServerContext.from_json(answer) if answer else None


def known_contexts(config: pytest.Config, models: list[ModelConfig]) -> list[KnownContext]:
    """Each model's context: its config's ``context_tokens``, else what its server loaded,
    else the model's maximum as its server reports it (a ceiling), else nothing."""
    known = []
    for model in models:
        if model.context_tokens is not None:
            known.append(KnownContext(model.context_tokens, f"context_tokens of {model.source}"))
            continue
        server = _probed(config, model)
        if server is None:
            continue
        if server.loaded is not None:
            known.append(KnownContext(server.loaded, server.source))
        elif server.maximum is not None:
            known.append(KnownContext(server.maximum, server.source, ceiling=True))
    return known


def server_context(config: pytest.Config, model: ModelConfig) -> ServerContext | None:
    """What ``model``'s server reported, if this run asked it (never asks anew)."""
    answer = config.stash.get(contexts_key, {}).get(model.key)
    return ServerContext.from_json(answer) if answer else None


def share_contexts(node: Any) -> None:
    """xdist: hand a worker the controller's answers."""
    node.workerinput[CONTEXTS_KEY] = dict(node.config.stash.get(contexts_key, {}))
