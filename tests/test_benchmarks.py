"""Every benchmark is a ``kernel.benchmark.Benchmark``: driven without pytest through the
protocol alone (cases → record → ask → score → fold), recall, a judged bench and a
known-item bench give the verdicts and figures ``pytest evals`` gives for the same setup,
which drives the same objects through its fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalrun import load_dump, run_evals
from settings_args import settings_of

from needle_lib.benches.benchmark import (
    JudgedBenchmark,
    KnownItemBenchmark,
    SearchBenchmark,
    search_benchmark,
)
from needle_lib.benches.dispatch import SearchDispatcher
from needle_lib.benches.plan import SearchClients, build_search_plan
from needle_lib.contract.outcome import Outcome
from needle_lib.kernel.benchmark import Benchmark, CaseVerdict
from needle_lib.kernel.runstate import RunState
from needle_lib.recall.benchmark import RecallBenchmark
from needle_lib.recall.dispatch import RecallDispatcher
from needle_lib.recall.plan import RecallClients, build_plan
from needle_lib.testing.openai_server import FakeOpenAIServer
from needle_lib.testing.search_server import JUDGE_DOWN, FakeSearchServer


def drive(benchmark: Benchmark[Any, Any, Any, Any, Any, Any],
          cases: list[Any]) -> tuple[Any, dict[str, CaseVerdict]]:
    """The pipeline with nothing but the protocol: the run's result and each verdict."""
    header = None
    records = []
    verdicts = {}
    for case in cases:
        record = benchmark.record(case)
        verdict = benchmark.score(case, benchmark.ask(case), record)
        header = header or record["header"]
        records.append({**record["case"], "outcome": verdict.outcome})
        verdicts[case.id] = verdict
    return benchmark.fold(header, records, in_progress=False), verdicts


def pytest_outcomes(result: pytest.RunResult) -> dict[str, Outcome]:
    """Case id → outcome, from ``-rA``'s short summary (``PASSED evals/…::test_x[id]``)."""
    words = {"PASSED": Outcome.PASSED, "FAILED": Outcome.FAILED, "ERROR": Outcome.ERROR,
             "SKIPPED": Outcome.SKIPPED}
    outcomes = {}
    for line in result.stdout.lines:
        word, _, rest = line.partition(" ")
        if word in words and "[" in rest:
            outcomes[rest.split("[", 1)[1].split("]", 1)[0]] = words[word]
    return outcomes


# --- recall --------------------------------------------------------------------------


@pytest.fixture
def recall_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer("mixed") as server:
        yield server


def test_recall_driven_through_the_protocol_gives_the_pytest_run(pytester, tmp_path,
                                                                   recall_server):
    args = ("--corpus", "jquery", "--model", "qwen36-35b", "--base-url", recall_server.url)
    settings = settings_of(*args)
    plan = build_plan(settings, lambda models: [])
    state = RunState(tmp_path / "state")
    clients = RecallClients()
    benchmark = RecallBenchmark(plan, clients, RecallDispatcher(lambda pair: [], lambda c: True),
                                state, shard_of=lambda pair: None, color=False)
    try:
        dump, verdicts = drive(benchmark, benchmark.cases())
    finally:
        clients.close()
        state.close()

    outcomes = {verdict.outcome for verdict in verdicts.values()}
    assert outcomes == {Outcome.PASSED, Outcome.FAILED}  # "mixed": some right, some wrong
    failed = next(v for v in verdicts.values() if v.outcome is Outcome.FAILED)
    assert "-" in failed.message and "\x1b[" not in failed.message  # the diff, uncoloured

    result = run_evals(pytester, tmp_path / "results", *args, "-rA", "-p", "no:randomly")
    assert pytest_outcomes(result) == {case_id: v.outcome for case_id, v in verdicts.items()}
    written = load_dump(tmp_path / "results", "jquery__qwen36-35b")
    timed = ("latency_s",)  # this machine's timing, the one figure two runs do not share
    assert {k: v for k, v in written["summary"].items() if k not in timed} == \
        {k: v for k, v in dump["summary"].items() if k not in timed}
    figures = ("case_id", "outcome", "matched", "scored", "passed", "response", "composition")
    assert [{k: c[k] for k in figures} for c in written["cases"]] == \
        [{k: c[k] for k in figures} for c in dump["cases"]]


def test_a_failing_recall_server_is_an_error_of_the_preflight(tmp_path):
    with FakeOpenAIServer("http500") as server:
        settings = settings_of("--corpus", "jquery", "--model", "qwen36-35b", "--base-url",
                               server.url, "--sample", "1")
        plan = build_plan(settings, lambda models: [])
        state = RunState(tmp_path / "state")
        clients = RecallClients()
        benchmark = RecallBenchmark(plan, clients,
                                    RecallDispatcher(lambda pair: [], lambda c: True), state,
                                    shard_of=lambda pair: None, color=False)
        try:
            (case,) = benchmark.cases()
            record = benchmark.record(case)
            verdict = benchmark.score(case, benchmark.ask(case), record)
        finally:
            clients.close()
            state.close()
    # the preflight is the first request of the pair: it fails here, naming the pair, and
    # the case that ran it errors without counting against the model
    assert verdict.outcome is Outcome.ERROR and verdict.answered is None
    assert "preflight for jquery__qwen36-35b failed" in verdict.message
    assert record["case"]["error"] == verdict.message and record["case"]["scored"] is None


# --- search --------------------------------------------------------------------------


def r(url: str, title: str, snippet: str = "") -> dict[str, str]:
    return {"url": url, "title": title, "snippet": snippet}


FINANCE = [
    {"query_id": "q-ceo", "query_text": "nvidia ceo", "query_source": "finance",
     "gold": {"field": "ceo", "field_type": "person", "value": "Jensen Huang", "aliases": [],
              "freshness_window": "1y", "tier": ""}},
    {"query_id": "q-ticker", "query_text": "microsoft stock ticker symbol",
     "query_source": "finance",
     "gold": {"field": "ticker", "field_type": "exact_id", "value": "MSFT", "aliases": [],
              "freshness_window": "static", "tier": ""}},
]
SCRIPT: dict[tuple[str, str], Any] = {
    ("exa", "nvidia ceo"): [r("https://a.example/1", "NVIDIA"),
                            r("https://a.example/2", "Leadership", "CEO Jensen Huang")],
    ("brave", "nvidia ceo"): [r("https://b.example/1", "NVIDIA GPUs", JUDGE_DOWN)],
    ("exa", "microsoft stock ticker symbol"): [r("https://a.example/4", "Microsoft")],
    ("brave", "microsoft stock ticker symbol"): 400,
}


@pytest.fixture
def engines(monkeypatch) -> Iterator[FakeSearchServer]:
    with FakeSearchServer(SCRIPT) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def search_drive(bench: str, queries: Path, *extra: str) -> tuple[Any, dict[str, CaseVerdict],
                                                                   SearchBenchmark]:
    settings = settings_of("--queries", str(queries), "--engines", "exa,brave", *extra)
    plan = build_search_plan(settings)
    clients = SearchClients(plan, settings.judge_model)
    dispatcher = SearchDispatcher(clients, lambda: [], lambda case: True, 1, all_at_once=False)
    benchmark = search_benchmark(plan, bench, dispatcher, lambda name: None)
    try:
        report, verdicts = drive(benchmark, benchmark.cases())
    finally:
        clients.close()
    return report, verdicts, benchmark


def report_of(results: Path, bench: str) -> dict[str, Any]:
    (path,) = (results / "search").glob(f"{bench}__*.json")
    return json.loads(path.read_text())


def same_figures(written: dict[str, Any], driven: Any, names: tuple[str, ...]) -> None:
    for engine in ("exa", "brave", "ultimate"):
        mine = driven.engines[engine]
        for name in names:
            assert written["engines"][engine][name] == getattr(mine, name), (engine, name)


def test_a_known_item_bench_driven_through_the_protocol_gives_the_pytest_run(
        pytester, tmp_path, monkeypatch, engines):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in FINANCE))
    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache-driven"))
    report, verdicts, benchmark = search_drive("finance", gold, "--judge")
    assert isinstance(benchmark, KnownItemBenchmark)
    exa_hit = verdicts["finance-q-ceo-exa"]
    assert exa_hit.outcome is Outcome.PASSED and exa_hit.answered is True
    # the backstop's judge is down on brave's only result, and nothing matched: undecided
    down = verdicts["finance-q-ceo-brave"]
    assert down.outcome is Outcome.ERROR and "undecided" in down.message
    assert down.answered is True  # the engine answered; the judge did not
    failed = verdicts["finance-q-ticker-exa"]
    assert failed.outcome is Outcome.FAILED and "gold: ticker = MSFT" in failed.message
    error = verdicts["finance-q-ticker-brave"]
    assert error.outcome is Outcome.ERROR and error.answered is False  # counts for fail-fast

    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache-pytest"))
    result = run_evals(pytester, tmp_path / "results", "--queries", str(gold), "--engines",
                       "exa,brave", "--judge", "-rA", "-p", "no:randomly",
                       module="test_finance.py")
    assert pytest_outcomes(result) == {case_id: v.outcome for case_id, v in verdicts.items()}
    same_figures(report_of(tmp_path / "results", "finance"), report,
                 ("recall_at_k", "mrr_at_k", "num_scored", "search_errors", "judge_errors"))


def test_a_judged_bench_driven_through_the_protocol_gives_the_pytest_run(
        pytester, tmp_path, monkeypatch, engines):
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(
        json.dumps({"query_id": f"q{i}", "query": text,
                    "hour_ts": "2026-07-02T14:00:00+00:00"}) + "\n"
        for i, text in enumerate(["best hiking boots", "rust async runtime"])))
    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache-driven"))
    report, verdicts, benchmark = search_drive("news", queries)
    assert isinstance(benchmark, JudgedBenchmark)
    assert len(verdicts) == 4 and all(v.answered is True for v in verdicts.values())

    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache-pytest"))
    result = run_evals(pytester, tmp_path / "results", "--queries", str(queries), "--engines",
                       "exa,brave", "-rA", "-p", "no:randomly", module="test_news.py")
    assert pytest_outcomes(result) == {case_id: v.outcome for case_id, v in verdicts.items()}
    same_figures(report_of(tmp_path / "results", "news"), report,
                 ("mean_ndcg", "num_scored", "search_errors", "judge_errors"))
