"""Error messages quote a response body in one line: an HTML page by its title."""

from needle_lib.net.bodies import body_excerpt


def test_an_html_page_is_named_by_its_title_and_size() -> None:
    page = ("<!DOCTYPE html>\n<html><head><title>Sign in &amp; continue</title></head>"
            "<body>" + "<p>filler</p>" * 500 + "</body></html>")
    assert body_excerpt(page) == f"HTML page 'Sign in & continue' ({len(page):,} chars)"


def test_an_html_page_without_a_title_falls_back_to_its_heading() -> None:
    assert body_excerpt("<html><body><h1>Welcome</h1></body></html>") == \
        "HTML page 'Welcome' (42 chars)"
    assert body_excerpt("<html><body>x</body></html>").startswith("HTML page without a title")


def test_other_bodies_are_folded_to_one_line_and_cut() -> None:
    assert body_excerpt('{"error":\n  "bad key"}') == '{"error": "bad key"}'
    assert body_excerpt("x" * 50, limit=10) == "x" * 10 + "…"
