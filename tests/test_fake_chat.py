"""The fakes' shared chat shape (``testing.chat``): a request of any shape is read without
raising, and an answer is what the real client parses."""

from __future__ import annotations

import json

import pytest

from needle_lib.llm.config import resolve_model
from needle_lib.llm.protocol import parse_completion, prepare_request
from needle_lib.testing.chat import completion, message_texts


@pytest.mark.parametrize(("body", "texts"), [
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "system"}]}, ["hi", ""]),
    ({"messages": [{"content": 3}, "not a message", None]}, ["3", "", ""]),
    ({"messages": "hi"}, []),
    (["not", "an", "object"], []),
    (None, []),
])
def test_message_texts_reads_any_request(body, texts):
    assert message_texts(body) == texts


def test_a_completion_parses_as_the_client_reads_it(tmp_path):
    config = resolve_model("fake", {"base_url": "http://127.0.0.1:9/v1"}, models_dir=tmp_path)
    request = prepare_request(config, [{"role": "user", "content": "q"}], api_key=None)
    answer = completion("the answer", model="fake", finish_reason="length", id="x",
                        usage={"prompt_tokens": 3, "completion_tokens": 2})
    result = parse_completion(request, 200, json.dumps(answer), latency_s=0.5, attempts=1)
    assert (result.content, result.finish_reason, result.usage) == (
        "the answer", "length", {"prompt_tokens": 3, "completion_tokens": 2})
