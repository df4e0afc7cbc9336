"""Request bodies with a shared prompt prefix encoded once are byte for byte what httpx's
``json=`` sends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needle_lib.llm import request_body
from needle_lib.llm.request_body import MIN_PREFIX_CHARS, json_body, share_prefix

#: Characters JSON escapes or that need care: quotes, backslashes, controls, non-ASCII,
#: a character outside the BMP (a surrogate pair under ``ensure_ascii``).
_TRICKY = st.text(alphabet=st.sampled_from('ab "\\\n\t\x00\x1f\u2028é字😀'), max_size=40)


def _httpx_body(payload: dict[str, Any]) -> bytes:
    return httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", json=payload).content


def _payload(content: str) -> dict[str, Any]:
    return {
        "model": "qwen/qwen3.6-35b",
        "messages": [
            {"role": "system", "content": "Be exact."},
            {"role": "user", "content": content},
        ],
        "max_tokens": 512,
        "temperature": 0.0,
        "stop": ["<|im_end|>"],
        "extra": {"nested": [1, 2.5, None, True]},
    }


@settings(max_examples=60)
@given(head=_TRICKY, tail=_TRICKY)
def test_a_body_with_a_shared_prefix_is_what_httpx_sends(head: str, tail: str) -> None:
    prefix = (head + "x") * (MIN_PREFIX_CHARS // (len(head) + 1) + 1)
    share_prefix(prefix)
    for content in (prefix + tail, prefix, tail, head + prefix):
        assert json_body(_payload(content)) == _httpx_body(_payload(content))


def test_a_shared_prefix_is_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = "function a() {\n  return '\\u00e9';\n}\n" * 500
    share_prefix(prefix)
    encoded: list[int] = []
    real = request_body._dumps

    def counting(value: Any) -> str:
        encoded.append(len(value) if isinstance(value, str) else 0)
        return real(value)

    monkeypatch.setattr(request_body, "_dumps", counting)
    for task in ("Task: the first", "Task: the second"):
        body = json_body(_payload(prefix + task))
        assert body == _httpx_body(_payload(prefix + task))
    assert max(encoded) < len(prefix)  # only the tasks and the short fields were encoded


def test_only_the_latest_prefixes_are_kept() -> None:
    texts = [f"{n:04d}" * MIN_PREFIX_CHARS for n in range(request_body.KEPT_PREFIXES + 2)]
    for text in texts:
        share_prefix(text)
    assert list(request_body._prefixes) == texts[2:]
    assert json_body(_payload(texts[0] + "!")) == _httpx_body(_payload(texts[0] + "!"))
