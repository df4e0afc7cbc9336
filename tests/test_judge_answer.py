"""The known-item answer judge: yes/no parsing, one repair round, cut-off answers and HTTP
failures as JudgeError (never a "no"), and cached verdicts asked once."""

from __future__ import annotations

import json

import httpx
import pytest

from needle_lib.judge.answer import AnswerJudge, parse_yes_no, says_yes
from needle_lib.judge.cache import JudgeCache
from needle_lib.judge.verdict import JudgeError
from needle_lib.llm import AsyncChatClient, RetryPolicy, resolve_model
from needle_lib.search.types import SearchResult

RESULT = SearchResult("https://a.example/ceo", "Leadership", "Chief executive Jensen Huang")


class Replies:
    """An OpenAI-compatible transport answering from a script; records each request."""

    def __init__(self, *replies: tuple[str, str] | int) -> None:
        self.replies = list(replies)
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": {"message": "bad"}})
        content, finish = reply
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": finish,
                                                      "message": {"role": "assistant",
                                                                  "content": content}}]})


def judge(tmp_path, replies: Replies) -> AnswerJudge:
    config = resolve_model("judge/x", {"base_url": "https://judge.test", "api_key": "k"},
                           models_dir=tmp_path)
    client = AsyncChatClient(config, transport=httpx.MockTransport(replies),
                             retry=RetryPolicy(attempts=1))
    return AnswerJudge(client, cache=JudgeCache(tmp_path / "cache.sqlite3"))


@pytest.mark.parametrize("text, expected", [
    ("Yes.", True), ("**yes**", True), ("no", False), ("No, it names another CEO", False),
    ("maybe", None), ("", None),
])
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) is expected


async def test_verdicts_are_cached_and_an_unreadable_reply_gets_one_repair_round(tmp_path):
    replies = Replies(("it depends", "stop"), ("yes", "stop"))
    answer_judge = judge(tmp_path, replies)
    assert says_yes(await answer_judge.decide("nvidia ceo", "ceo = Jensen Huang", RESULT))
    assert len(replies.requests) == 2
    repair = replies.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "it depends"}
    assert says_yes(await answer_judge.decide("nvidia ceo", "ceo = Jensen Huang", RESULT))
    assert len(replies.requests) == 2  # the second verdict came from the cache
    await answer_judge.aclose()


@pytest.mark.parametrize("replies, message", [
    ((("hmm", "stop"), ("still unsure", "stop")), "neither yes nor no"),
    ((("", "length"),), "whole max_tokens budget"),
    ((400,), "HTTP 400"),
])
async def test_failures_are_errors_not_a_no(tmp_path, replies, message):
    answer_judge = judge(tmp_path, Replies(*replies))
    (verdict,) = await answer_judge.decide_many("nvidia ceo", "ceo = Jensen Huang", [RESULT])
    assert isinstance(verdict, JudgeError) and message in str(verdict)
    await answer_judge.aclose()
