"""URL normalisation: one page, one key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from needle_lib.metrics.urls import normalize_url


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


@pytest.mark.parametrize("param", ["srsltid=AfmBOor", "msockid=2a1b", "twclid=2-7x",
                                   "gbraid=0AAA", "ttclid=E.C.P", "mkt_tok=NzU2", "_hsenc=p2"])
def test_engine_and_publisher_click_ids_are_not_identity(param: str) -> None:
    """Google (srsltid), Bing (msockid), X (twclid) and others tag result links."""
    assert normalize_url(f"https://x.com/story?{param}&id=7") == "x.com/story?id=7"


def test_percent_escapes_in_paths_decode_to_one_spelling() -> None:
    assert normalize_url("https://x.com/caf%C3%A9") == normalize_url("https://x.com/café")
    assert normalize_url("https://x.com/%7Euser/a%20b") == normalize_url("https://x.com/~user/a b")
    assert normalize_url("https://x.com/caf%c3%a9") == "x.com/café"


def test_escapes_that_change_the_path_stay_escaped() -> None:
    """``a%2Fb`` is one segment, ``a/b`` two; bytes that are not UTF-8 keep their escape."""
    assert normalize_url("https://x.com/a%2fb") == "x.com/a%2Fb" != normalize_url("x.com/a/b")
    assert normalize_url("https://x.com/%ff") == "x.com/%FF"


@pytest.mark.parametrize(("url", "key"), [
    ("http://www.www.com", "www.com"),  # Hypothesis: once 'www.com', then 'com'
    ("www.com/a", "www.com/a"),
    ("https://www.www.example.com/a", "example.com/a"),
    ("http://[::1]:80/x", "[::1]/x"),  # an IPv6 host lost its brackets: the key did not parse
    ("http://[fe80::1]:8080/", "[fe80::1]:8080"),
    ("http://[::1/x", "[::1/x"),  # unbalanced: urlsplit raised 'Invalid IPv6 URL'
])
def test_host_shapes_are_stable(url: str, key: str) -> None:
    assert normalize_url(url) == key
    assert normalize_url(key) == key


@given(st.from_regex(r"https://x\.com(/([a-z~]|%[0-9A-Fa-f]{2}|é){1,6}){1,3}", fullmatch=True))
def test_idempotent_with_escapes(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


#: Where an escape can stand: at the end of a path, inside one, alone, before a trailing
#: slash, in a query value and name, and in the fragment (dropped, but it must not leak).
ESCAPE_PLACES = [
    "https://x.com/a{e}", "https://x.com/a{e}b", "https://x.com/{e}", "https://x.com/{e}/",
    "https://x.com/a?q={e}", "https://x.com/a?q{e}=1", "https://x.com/a#f{e}",
]


@pytest.mark.parametrize("place", ESCAPE_PLACES)
def test_idempotent_for_every_single_byte_escape(place: str) -> None:
    """Every ``%00``-``%FF`` (controls, spaces, reserved, non-UTF-8 bytes): ``%0B`` once
    decoded to a vertical tab that the next pass stripped, giving one URL two keys."""
    unstable = []
    for byte in range(256):
        url = place.format(e=f"%{byte:02X}")
        once = normalize_url(url)
        if normalize_url(once) != once:
            unstable.append(url)
    assert unstable == []


@pytest.mark.parametrize("place", ESCAPE_PLACES)
@pytest.mark.parametrize("lead", ["%C2", "%E2%80", "%E3%80"])
def test_idempotent_for_non_ascii_spaces_and_controls(place: str, lead: str) -> None:
    """Two- and three-byte UTF-8 escapes whose last byte varies: NEL (U+0085), no-break
    space (U+00A0), the U+2000 spaces, line/paragraph separators and the ideographic space
    are whitespace to ``str.strip`` and must stay escaped."""
    unstable = []
    for byte in range(0x80, 0xC0):
        url = place.format(e=f"{lead}%{byte:02X}")
        once = normalize_url(url)
        if normalize_url(once) != once:
            unstable.append(url)
    assert unstable == []


def test_controls_and_spaces_stay_escaped_in_paths() -> None:
    assert normalize_url("https://x.com/a%0B") == "x.com/a%0B"
    assert normalize_url("https://x.com/a%c2%a0") == "x.com/a%C2%A0"
    assert normalize_url("https://x.com/a%7F") == "x.com/a%7F"


def test_literal_whitespace_and_controls_are_escaped_like_their_escapes() -> None:
    """A literal no-break space, line separator or vertical tab is the same page as its
    escape, and no key holds whitespace (it is a docno in TREC files)."""
    assert normalize_url("https://x.com/a\u00a0b") == normalize_url("https://x.com/a%C2%A0b")
    assert normalize_url("https://x.com/a\u2028b") == "x.com/a%E2%80%A8b"
    assert normalize_url("https://x.com/\x0bx") == "x.com/%0Bx"
    assert normalize_url("https://x .com/p") == "x%20.com/p"


@given(st.text(max_size=40))
def test_no_key_holds_whitespace_or_controls(tail: str) -> None:
    host = tail.replace("[", "").replace("]", "")  # an unbalanced bracket is no host at all
    for url in (f"https://x.com/{tail}", f"https://{host}/p", f"https://x.com/p?{tail}"):
        key = normalize_url(url)
        assert key.isprintable() and " " not in key, (url, key)
