"""The shared contract: one verdict function, one "same setup", one exception root."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import needle_lib
from needle_lib.contract.outcome import (
    Outcome,
    case_outcome,
    is_answered,
    is_policy_skip,
    scored_outcome,
)
from needle_lib.contract.setup import (
    SetupMismatch,
    mode_differences,
    request_knobs,
    resume_source,
    setup_differences,
)
from needle_lib.errors import NeedleError, UsageError

HEADER = {
    "schema_version": 2, "prompt_version": "p1", "scorer_version": "s1",
    "corpus": {"name": "jquery", "sha256": "abc", "config": "configs/corpora/jquery.toml"},
    "model": {"key": "m", "label": "M", "request": {
        "model": "m", "temperature": 0.0, "base_url": "http://a", "timeout": 60,
        "label": "M", "concurrency": 1, "config": "m", "auth": "none"}},
    "sampling": {"k": 16, "seed": 42}, "scoring": {"count_comments": True},
    "package": {"version": "0.1.0"}, "notes": [], "expected_cases": 16,
}


def _with(**changes):
    header = {**HEADER, "model": {**HEADER["model"],
                                  "request": {**HEADER["model"]["request"]}}}
    for dotted, value in changes.items():
        *path, leaf = dotted.split("__")
        node = header
        for part in path:
            node[part] = dict(node[part])
            node = node[part]
        node[leaf] = value
    return header


@pytest.mark.parametrize("scored, passed, expected", [
    (0, False, Outcome.SKIPPED), (0, True, Outcome.SKIPPED),
    (20, True, Outcome.PASSED), (20, False, Outcome.FAILED),
])
def test_one_function_turns_a_score_into_an_outcome(scored, passed, expected):
    assert scored_outcome(scored, passed) is expected
    assert case_outcome({"scored": scored, "passed": passed}) is expected


def test_a_policy_skip_is_answered_and_a_fail_fast_skip_is_not():
    policy = {"outcome": "skipped", "scored": 0, "passed": False}
    fail_fast = {"outcome": "skipped", "scored": None, "skip_reason": "fail-fast"}
    assert is_policy_skip(policy) and is_answered(policy)
    assert not is_policy_skip(fail_fast) and not is_answered(fail_fast)
    assert is_answered({"outcome": "failed", "scored": 5, "passed": False})
    assert not is_answered({"outcome": "error", "scored": None})


def test_a_search_case_is_answered_by_its_verdict_and_never_by_an_error_or_skip():
    """Search ``--resume`` keeps what recall keeps: a verdict, never an infrastructure
    outcome (a search case has no ``scored``, so it is never a policy skip)."""
    search = {"query_id": "q", "engine": "exa", "results": [], "search_error": None}
    assert is_answered({**search, "outcome": "passed", "verdict": "hit at rank 1"})
    assert is_answered({**search, "outcome": "failed", "verdict": "ratings [0]"})
    assert not is_answered({**search, "outcome": "error", "search_error": "HTTP 500"})
    assert not is_answered({**search, "outcome": "error", "judge_errors": 2})
    for reason in ("exa: set EXA_API_KEY", "fail-fast: 2 consecutive errors",
                   "relevance judge not configured"):
        assert not is_answered({**search, "outcome": "skipped", "skip_reason": reason})


def test_resume_takes_the_newest_run_of_its_setup_else_names_the_newest_difference():
    """One rule for recall and search ``--resume``: an older run of this setup beats a newer
    one of another; only runs of other setups is a refusal naming the newest's leaves."""
    other = _with(scoring__count_comments=False)
    newer, older = Path("runs/newer.json"), Path("runs/older.json")
    runs = [(newer, other, "newer"), (older, _with(notes=["moved"]), "older")]
    assert resume_source(runs, HEADER, ("dump", "this run")) == "older"
    assert resume_source([], HEADER, ("dump", "this run")) is None
    with pytest.raises(SetupMismatch) as refused:
        resume_source(runs[:1], HEADER, ("earlier run", "this run"))
    assert str(refused.value).splitlines() == [
        f"--resume: {newer} was produced by a different setup; refusing to mix:",
        "  scoring.count_comments: False (earlier run) vs True (this run)"]
    assert isinstance(refused.value, UsageError)


def test_bookkeeping_never_blocks_and_setup_leaves_are_named():
    moved = _with(model__request__base_url="http://b", model__request__timeout=5,
                  model__request__label="other", model__label="other",
                  model__request__concurrency=4, corpus__config="/elsewhere/jquery.toml",
                  package={"version": "9"}, notes=["x"], expected_cases=3)
    assert setup_differences(HEADER, moved) == []
    changed = _with(model__request__temperature=0.7, corpus__sha256="def")
    assert [(d.field, d.ours, d.theirs) for d in setup_differences(HEADER, changed)] == [
        ("corpus.sha256", "abc", "def"), ("model.request.temperature", 0.0, 0.7)]


SEARCH = {"bench": "news", "kind": "judged", "engines": ["exa", "tavily"], "num_results": 5,
          "engine_modes": {"tavily": "basic"}}


def test_an_engine_mode_is_setup_for_the_engines_both_runs_asked():
    advanced = {**SEARCH, "engine_modes": {"tavily": "advanced"}}
    assert [(d.field, d.ours, d.theirs) for d in setup_differences(SEARCH, advanced)] == [
        ("engine_modes.tavily", "basic", "advanced")]
    with pytest.raises(SetupMismatch, match=r"(?m)^  engine_modes\.tavily: 'advanced' "
                                            r"\(earlier run\) vs 'basic' \(this run\)$"):
        resume_source([(Path("r.json"), advanced, "r")], SEARCH, ("earlier run", "this run"))
    # the engine list is bookkeeping: an engine only one run asked brings no mode to compare
    exa_only = {**SEARCH, "engines": ["exa"]}
    exa_only.pop("engine_modes")
    assert setup_differences(exa_only, advanced) == []
    assert setup_differences({**advanced, "engines": ["tavily"]}, advanced) == []
    # a header written before modes were recorded ran in the default
    before = {key: value for key, value in SEARCH.items() if key != "engine_modes"}
    assert setup_differences(before, SEARCH) == []
    assert [d.field for d in setup_differences(before, advanced)] == ["engine_modes.tavily"]
    # compare's question: only the modes, the rest of the setup aside
    assert [d.describe(("a.json", "b.json")) for d in mode_differences(
        {**SEARCH, "num_results": 3}, advanced)] == [
        "engine_modes.tavily: 'basic' (a.json) vs 'advanced' (b.json)"]
    assert mode_differences(HEADER, _with(notes=["x"])) == []  # recall dumps have none


def test_compare_knobs_leave_out_the_same_bookkeeping():
    ours = HEADER["model"]["request"]
    theirs = {**ours, "base_url": "http://b", "timeout": 1, "temperature": 0.3}
    assert request_knobs(ours, theirs) == {"temperature": (0.0, 0.3)}


def _exception_classes():
    for info in pkgutil.walk_packages(needle_lib.__path__, "needle_lib."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                yield cls


def test_every_needle_exception_has_one_root():
    classes = list(_exception_classes())
    assert len(classes) > 20
    assert [c.__qualname__ for c in classes if not issubclass(c, NeedleError)] == []
    names = [c.__name__ for c in classes]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_a_bug_while_planning_is_not_a_usage_error(pytester, monkeypatch):
    """Only Needle's usage errors become pytest's exit 4; any other error keeps its
    traceback (session.py once turned every ValueError into a usage error)."""
    from needle_lib.plugin import collect, settings

    def broken(run, contexts):
        raise ValueError("a bug, not bad input")

    config = SimpleNamespace(stash={settings.settings_key: None})
    monkeypatch.setattr(collect, "build_plan", broken)

    with pytest.raises(ValueError, match="a bug"):
        collect.recall_plan(config)  # type: ignore[arg-type]

    def bad_input(run, contexts):
        raise UsageError("configs/corpora/x.toml: no such file")

    monkeypatch.setattr(collect, "build_plan", bad_input)
    with pytest.raises(pytest.UsageError, match=r"x\.toml"):
        collect.recall_plan(config)  # type: ignore[arg-type]
