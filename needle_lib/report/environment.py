"""What a run's report says about the run: its title and its environment table (the
model and its server, the corpus and its provenance, the engines, the query file and the
judge, the Needle version and commit), in place of pytest's own entries.

The plugin fills them from the plan when the session starts and again from the dumps and
search reports when it ends (``plugin/html.py``); this module only describes a
``RunSubject``, so it reads no pytest state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from needle_lib.contract.records import CorpusDescription, RecallDump
from needle_lib.llm.config import REFERENCE_BASE_URL
from needle_lib.provenance import fixture_sources
from needle_lib.redact import MASK, redact_url
from needle_lib.report.search_summary import engine_label
from needle_lib.report.untrusted import environment_value
from needle_lib.tomlconf import ConfigError

#: pytest-metadata's entries about the test runner (pytest, pluggy, its plugins, the
#: interpreter): a report of an evaluation shows the model, server and corpus instead.
RUNNER_METADATA = ("Python", "Platform", "Packages", "Plugins")


def drop_runner_metadata(metadata: dict[str, object]) -> None:
    for key in RUNNER_METADATA:
        metadata.pop(key, None)


def public_url(url: str) -> str:
    """``url`` fit for a report: no user or password, secret query values and every
    registered key masked."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        parts = parts._replace(netloc=f"{MASK}@{host}" + (f":{parts.port}" if parts.port else ""))
    return redact_url(urlunsplit(parts))


@dataclass(frozen=True)
class RunSubject:
    """What a run evaluates, as the environment table shows it: from the plan when the run
    starts, from the dumps and search reports when it ends (``-k`` decides what ran)."""

    #: (key, model id, base URL, config source) per model
    models: Sequence[tuple[str, str, str, str]] = ()
    #: each corpus's dump block (``Corpus.describe()``)
    corpora: Sequence[CorpusDescription] = ()
    #: each engine with its env-tuned mode, if it has one (``search_summary.engine_label``)
    engines: Sequence[str] = ()
    #: (path, rows, sha256) of the query file
    queries: tuple[str, int, str | None] | None = None
    #: (model, prompt versions) of the judge
    judge: tuple[str, str] | None = None


def finished_subject(dumps: Sequence[RecallDump],
                     reports: Sequence[Mapping[str, Any]]) -> RunSubject:
    models = {d["model"]["key"]: (d["model"]["key"], d["model"]["name"],
                                  d["model"]["request"]["base_url"],
                                  d["model"]["request"]["source"]) for d in dumps}
    corpora = {d["corpus"]["name"]: d["corpus"] for d in dumps}
    # a report's fields repeat its header's ``engine_modes`` (``engines`` are its figures)
    engines = dict.fromkeys(engine_label(e, r.get("engine_modes") or {})
                            for r in reports for e in r["engines"] if e != "ultimate")
    queries = reports[0]["queries"] if reports else None
    judges = [r["judge"] for r in reports if r.get("judge")]
    return RunSubject(
        models=list(models.values()), corpora=list(corpora.values()), engines=list(engines),
        queries=(queries["path"], queries["count"], queries["sha256"]) if queries else None,
        judge=(judges[0]["model"], ", ".join(dict.fromkeys(j["prompt_version"] for j in judges)))
        if judges else None)


def model_line(key: str, name: str, base_url: str, source: str) -> str:
    if base_url == REFERENCE_BASE_URL:
        return f"{key}: Needle's built-in reference model (no server)"
    config = "raw model id, built-in defaults" if source == "raw" else source
    return f"{key}: model {name} at {public_url(base_url)} ({config})"


def corpus_line(corpus: CorpusDescription, sources: dict[str, str] | str) -> str:
    files = corpus["files"]
    shown = ", ".join(files[:2]) + (f" and {len(files) - 2} more" if len(files) > 2 else "")
    line = (f"{corpus['name']}: {shown} · {corpus['lines']:,} lines · "
            f"~{corpus['tokens']:,} tokens · sha256 {corpus['sha256'][:12]}")
    if isinstance(sources, str):
        return f"{line} · provenance: {sources}"
    known = list(dict.fromkeys(sources[f] for f in files if f in sources))
    if not known:
        return line
    more = f" (and {len(known) - 1} more sources)" if len(known) > 1 else ""
    return f"{line} · from {known[0]}{more}"


def _fixture_sources() -> dict[str, str] | str:
    try:
        return fixture_sources()
    except ConfigError as exc:
        return str(exc)


def _judge_line(model: str, prompts: str) -> str:
    from needle_lib.judge.config import judge_model_config

    try:
        where = f" at {public_url(judge_model_config(model).base_url)}"
    except ConfigError as exc:
        where = f" ({exc})"
    return f"{model}{where} · prompt {prompts}"


def needle_environment(subject: RunSubject, package: Mapping[str, str]) -> dict[str, str]:
    """The report's environment table: what was evaluated, on what, by which code
    (``package``: ``provenance.package_info()``). Each value is HTML (pytest-html inserts
    it unescaped), built by ``environment_value``."""
    entries: dict[str, list[str]] = {}
    if subject.models:
        entries["Model"] = [model_line(*model) for model in subject.models]
    if subject.corpora:
        sources = _fixture_sources()
        entries["Corpus"] = [corpus_line(corpus, sources) for corpus in subject.corpora]
    if subject.engines:
        entries["Engines"] = [", ".join(subject.engines)]
    if subject.queries:
        path, rows, sha = subject.queries
        entries["Queries"] = [f"{path} ({rows:,} rows, sha256 {(sha or '?')[:12]})"]
    if subject.judge:
        entries["Judge"] = [_judge_line(*subject.judge)]
    entries["Needle"] = [f"{package['name']} {package['version']}"]
    entries["Commit"] = [package["git_revision"]]
    return {key: environment_value(lines) for key, lines in entries.items()}


#: Every key Needle may put in the table (a key that no longer applies is removed).
NEEDLE_KEYS = frozenset({"Model", "Corpus", "Engines", "Queries", "Judge", "Needle", "Commit"})


def run_title(recall: Sequence[tuple[str, str]], search: Sequence[tuple[str, Sequence[str]]],
              started: datetime) -> str:
    """``Needle · <corpora> × <models> · <bench> × <engines> · <time>``: what a reader
    needs to tell one report from another, in the page's title and the browser's tab."""
    parts = []
    if recall:
        corpora = dict.fromkeys(corpus for corpus, _ in recall)
        models = dict.fromkeys(model for _, model in recall)
        parts.append(f"{', '.join(corpora)} × {', '.join(models)}")
    for bench, engines in search:
        parts.append(f"{bench} × {', '.join(engines)}")
    return " · ".join(["Needle", *parts, f"{started:%Y-%m-%d %H:%M} UTC"])
