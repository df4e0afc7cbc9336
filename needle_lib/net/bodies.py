"""Response bodies quoted in error messages: one line, never a whole page.

A proxy, captive portal or misrouted base URL answers with an HTML page; pasting it into an
error buries the one fact that matters (which page came back), so HTML is reduced to its
title (or first heading) and size, and any other body to its first ``limit`` characters.
"""

from __future__ import annotations

import html
import re

_HTML_START = re.compile(r"\s*(<!doctype html|<html|<head|<body)", re.I)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")


def body_excerpt(text: str, limit: int = 300) -> str:
    """``text`` as a single line for an error message: HTML as ``HTML page "title" (N
    chars)``, anything else whitespace-folded and cut to ``limit`` characters."""
    if _HTML_START.match(text):
        match = _TITLE.search(text)
        title = match and " ".join(_TAG.sub("", match.group(1) or match.group(2)).split())
        named = f" {html.unescape(title)!r}" if title else " without a title"
        return f"HTML page{named} ({len(text):,} chars)"
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"
