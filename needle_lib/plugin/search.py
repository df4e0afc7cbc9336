"""The search half of the plugin: the fixtures that run a search case through its bench's
``Benchmark`` (``benches.benchmark``), the same way ``plugin.fixtures.settle`` runs a
recall case.

The plugin registers this module only for a run with a query set (``--queries``): without
one no search case exists, and a recall run never imports the search half.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from needle_lib.benches.benchmark import SearchBenchmarks, engine_subject
from needle_lib.benches.dispatch import SearchDispatcher
from needle_lib.benches.plan import SearchCase, SearchClients
from needle_lib.kernel.benchmark import CaseVerdict
from needle_lib.net.slots import CallSlots
from needle_lib.plugin.collect import search_case_of, search_plan
from needle_lib.plugin.fixtures import settle, tripped
from needle_lib.plugin.resume import is_kept, resumed_from
from needle_lib.plugin.scorecard import Scorecard
from needle_lib.plugin.settings import is_worker, run_state, settings
from needle_lib.plugin.shard import SCATTERING, run_dist


@pytest.fixture(scope="session")
def search_clients(request: pytest.FixtureRequest) -> Iterator[SearchClients]:
    config = request.config
    plan = search_plan(config)
    # one bound on judge calls for the whole run: every worker holds slots in the run dir
    slots = CallSlots(plan.judge_concurrency, run_state(config).path.parent, name="judge")
    clients = SearchClients(plan, settings(config).judge_model, slots)
    yield clients
    clients.close()


@pytest.fixture(scope="session")
def search_dispatcher(request: pytest.FixtureRequest,
                      search_clients: SearchClients) -> SearchDispatcher:
    config, session = request.config, request.session

    def upcoming() -> list[SearchCase]:
        # session.items is this process's run order; under xdist, --dist loadgroup (the
        # search default) keeps an engine's cases on one worker.
        cases = (search_case_of(item) for item in session.items)
        # a case kept by --resume is never sent to a lane
        return [case for case in cases if case is not None and not is_kept(config, case)]

    lookahead = settings(config).search_lookahead
    if run_dist(config) in SCATTERING:
        lookahead = 1  # this worker may not run an engine's next cases: fetch none ahead
    return SearchDispatcher(
        search_clients, upcoming,
        lambda case: tripped(config, engine_subject(case)) is None, lookahead,
        all_at_once=not is_worker(config))


@pytest.fixture(scope="session")
def search_benchmarks(request: pytest.FixtureRequest,
                      search_dispatcher: SearchDispatcher) -> SearchBenchmarks:
    config = request.config
    return SearchBenchmarks(search_plan(config), search_dispatcher,
                            lambda bench: resumed_from(config, bench))


@pytest.fixture
def search_verdict(request: pytest.FixtureRequest, search_case: SearchCase,
                   search_benchmarks: SearchBenchmarks,
                   scorecard: Scorecard) -> CaseVerdict:
    """One query searched on one engine and judged or matched: its verdict."""
    return settle(request.config, search_benchmarks.of(search_case.bench), search_case,
                  scorecard)
