"""A case's judge identity is that of the verdicts it used, whichever case ran first.

The judge client is shared by a worker's cases; before, a case copied what the client had
learnt last, so a case judged wholly from the cache recorded ``null`` or a model id
depending on whether another case had asked the server before it. Each verdict now keeps
who answered it, in the cache too, and a case reads its identity off its own verdicts
(``judge.base.seen_in``). The cases here run through ``benches.fetch`` as a run does, with a
fresh ``SearchClients`` standing for each new process, against a loopback fake whose
``served_model`` plays a router that puts another model behind the judge's name.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from needle_lib.benches.fetch import JudgedWork, fetch_judged
from needle_lib.benches.plan import SearchCase, SearchClients, SearchPlan
from needle_lib.benches.queries import Query
from needle_lib.contract.schema import SamplingRecord
from needle_lib.judge import base
from needle_lib.judge.answer import AnswerJudge, says_yes
from needle_lib.judge.base import JudgeSeen, seen_in
from needle_lib.judge.cache import JudgeCache, JudgedPair
from needle_lib.judge.verdict import JudgeError, ServedBy, Verdict
from needle_lib.llm import RetryPolicy, make_async_chat_client
from needle_lib.llm.config import resolve_model
from needle_lib.search.types import SearchResult
from needle_lib.testing.search_server import JUDGE_YES, FakeSearchServer

ROVER = SearchCase("news", Query("rover", "mars rover landing"), "exa")
FED = SearchCase("news", Query("fed", "fed rate decision"), "exa")


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeSearchServer]:
    """The engines and the judge on one loopback fake; the judges' cache in ``tmp_path``."""
    monkeypatch.setattr(base, "DEFAULT_CACHE_PATH", tmp_path / "judge.sqlite3")
    with FakeSearchServer(served_model="judge-v1") as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def run_cases(cases: list[SearchCase], num_results: int = 3) -> list[JudgedWork]:
    """``cases`` one after another in a new process's clients (a new judge, the same cache)."""
    plan = SearchPlan(queries_path=None, queries=[], engines=["exa"], num_results=num_results,
                      snippet_chars=2000, judge_model="fake-judge", judge_concurrency=2,
                      sampling=SamplingRecord(sample=None, seed=0, limit=None),
                      queries_sha256=None)
    clients = SearchClients(plan, None)
    try:
        lane = asyncio.Lock()
        works = [clients.run(fetch_judged(clients, case, lane)) for case in cases]
    finally:
        clients.close()
    assert all(isinstance(w, JudgedWork) and w.verdicts for w in works)
    return works


def seen(model: str | None, output: str | None = "json_schema") -> JudgeSeen:
    return JudgeSeen(judge_served_model=model, judge_output=output)


def test_a_case_from_the_cache_records_the_same_judge_whichever_case_ran_first(
        judge_server: FakeSearchServer) -> None:
    run_cases([ROVER])  # an earlier run: the rover case's verdicts are cached by judge-v1
    judge_server.served_model = "judge-v2"  # the router now serves another model
    fed_first = run_cases([FED, ROVER])  # fed asks judge-v2 before rover reads the cache
    rover_first = run_cases([ROVER, FED])  # rover first: the client has asked nothing yet
    assert fed_first[1].judge_requests == rover_first[0].judge_requests == 0
    # the rover case's verdicts were judge-v1's, in either order (before: v2, then null)
    assert fed_first[1].seen == rover_first[0].seen == seen("judge-v1")
    # the fed case asked judge-v2 the first time and read judge-v2's verdicts the second
    assert fed_first[0].judge_requests > 0 and rover_first[1].judge_requests == 0
    assert fed_first[0].seen == rover_first[1].seen == seen("judge-v2")


def test_a_case_mixing_cached_and_fresh_verdicts_records_the_newest(
        judge_server: FakeSearchServer) -> None:
    run_cases([ROVER], num_results=2)  # its first two results cached by judge-v1
    judge_server.served_model = "judge-v2"
    (mixed,) = run_cases([ROVER], num_results=4)  # the same two, and two asked of judge-v2
    assert [v.cached for v in mixed.verdicts if isinstance(v, Verdict)] == [
        True, True, False, False]
    assert mixed.seen == seen("judge-v2")
    (cached,) = run_cases([ROVER], num_results=4)  # all four cached now: the same answer
    assert cached.judge_requests == 0 and cached.seen == seen("judge-v2")


def test_the_rule_takes_each_field_from_the_newest_answer_that_knows_it() -> None:
    def verdict(model: str | None, output: str | None, at: float) -> Verdict:
        return Verdict(3, "HM", "", served_by=ServedBy(model, output, at))

    unknown = verdict(None, None, 50.0)  # a cache entry from before the fields were kept
    assert seen_in([unknown]) == seen(None, None) == seen_in([])
    assert seen_in([verdict("a", "text", 10.0), unknown, verdict("b", None, 20.0)]) == seen(
        "b", "text")
    failed = JudgeError("unreadable", served_by=ServedBy("c", "json_object", 30.0))
    assert seen_in([verdict("a", "text", 10.0), failed, JudgeError("HTTP 500")]) == seen(
        "c", "json_object")


def _old_cache(path: Path) -> None:
    """A judge cache as a Needle before ``reply`` and ``served_model`` wrote it."""
    with sqlite3.connect(path) as conn:
        conn.execute("""CREATE TABLE verdicts_v2 (
            key TEXT PRIMARY KEY, rating INTEGER NOT NULL, label TEXT NOT NULL,
            reasoning TEXT NOT NULL, gates TEXT NOT NULL, model TEXT NOT NULL,
            prompt_version TEXT NOT NULL, query TEXT NOT NULL, url TEXT NOT NULL,
            created_at REAL NOT NULL)""")
    conn.close()


OLD_PAIR = JudgedPair("m", "v1", "mars rover", "https://a.example/x", "Rover", "It landed.")


def test_an_old_cache_entry_reads_with_an_unknown_judge(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _old_cache(path)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO verdicts_v2 VALUES (?, 3, 'HM', 'fits', ?, 'm', 'v1', "
                     "'mars rover', 'a.example/x', 1.0)",
                     (OLD_PAIR.key, json.dumps({"integrity": "pass"})))
    conn.close()
    with JudgeCache(path) as cache:
        old = cache.get(OLD_PAIR)
        assert old == Verdict(3, "HM", "fits", cached=True, gates={"integrity": "pass"})
        assert old is not None and (old.reply, old.served_by) == ("", ServedBy(None, None, 1.0))
        assert seen_in([old]) == seen(None, None)
        # the migrated file keeps who answered a verdict stored from now on
        new = JudgedPair("m", "v1", "mars rover", "https://b.example/y", "Rover", "It landed.")
        cache.put(new, Verdict(2, "MM", "", served_by=ServedBy("judge-v1", "text", 5.0)))
        stored = cache.get(new)
    assert stored is not None and seen_in([stored]) == seen("judge-v1", "text")


async def test_the_backstop_s_cached_answers_keep_who_gave_them(tmp_path: Path) -> None:
    hit = SearchResult(url="https://a.example", title="Q3", snippet=f"revenue {JUDGE_YES}")
    miss = SearchResult(url="https://b.example", title="Q3", snippet="revenue")
    cache_path = tmp_path / "judge.sqlite3"
    identities = []
    with FakeSearchServer(served_model="judge-v1") as server:
        config = resolve_model("fake-judge", {"base_url": server.url, "api_key": "k"})
        for _ in range(2):  # a new process each time: the second one asks nothing
            chat = make_async_chat_client(config, retry=RetryPolicy(attempts=1))
            async with AnswerJudge(chat, cache=JudgeCache(cache_path)) as judge:
                answers = await judge.decide_many("nvidia revenue", "$35.1bn", [hit, miss])
            assert [says_yes(a) for a in answers] == [True, False]
            identities.append((judge.requests, seen_in(answers)))
    assert identities == [(2, seen("judge-v1")), (0, seen("judge-v1"))]
