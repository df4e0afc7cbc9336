"""URL normalisation: one page, one key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.metrics import normalize_url


@pytest.mark.parametrize(
    "spelling",
    [
        "https://www.Example.com/a/b/",
        "http://example.com/a/b",
        "HTTPS://EXAMPLE.COM:443/a/b#section",
        "example.com/a/b?utm_source=x&utm_medium=y",
        "https://example.com/a/b?gclid=1&fbclid=2&ref=home",
    ],
)
def test_spellings_of_one_page_normalise_together(spelling: str) -> None:
    assert normalize_url(spelling) == "example.com/a/b"


def test_content_params_kept_and_sorted_path_case_kept() -> None:
    assert normalize_url("https://x.com/Doc?b=2&a=1&utm_id=9") == "x.com/Doc?a=1&b=2"
    assert normalize_url("https://x.com/doc") != normalize_url("https://x.com/Doc")


def test_non_default_port_is_kept() -> None:
    assert normalize_url("http://x.com:8080/") == "x.com:8080"


URL = r"https?://(www\.)?[a-z]{1,8}\.(com|org)(/[a-z0-9]{1,5}){0,3}/?"


@given(st.from_regex(URL, fullmatch=True))
def test_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once
