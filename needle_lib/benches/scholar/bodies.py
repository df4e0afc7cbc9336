"""A paper's full text as plain paragraphs: arXiv's HTML rendering and Europe PMC's JATS XML.

Only running text counts (paragraphs and figure captions): body queries must be built on
details a reader finds in the paper itself, so the abstract, author block, bibliography and
formulas are left out. The abstract matters most: a "full-text detail" that is also in
the abstract is no harder to find than the abstract, and the leak check would drop it
anyway. XML is parsed with defusedxml: these documents come from the network.
"""

from __future__ import annotations

from html.parser import HTMLParser
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from needle_lib.errors import NeedleError


class BodyError(NeedleError, ValueError):
    """A full-text document that yields no usable text (malformed, forbidden XML, empty)."""


_HTML_SKIP_TAGS = frozenset({
    "math", "script", "style", "svg", "noscript", "annotation", "annotation-xml", "nav",
    "header", "footer", "button", "form", "table",
})
#: LaTeXML classes of arXiv HTML that are not running text.
_HTML_SKIP_CLASSES = frozenset({
    "ltx_abstract", "ltx_authors", "ltx_bibliography", "ltx_dates", "ltx_page_footer",
    "ltx_acknowledgements", "ltx_keywords", "ltx_classification", "ltx_note",
})
_HTML_BLOCKS = frozenset({"p", "figcaption"})
_HTML_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr",
})


class _ArticleText(HTMLParser):
    """Collects the text of ``<p>``/``<figcaption>`` blocks inside ``<article>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._stack: list[tuple[str, str]] = []  # (tag, role: article|skip|block|"")
        self._depth = {"article": 0, "skip": 0, "block": 0}
        self._text: list[str] = []
        self.blocks: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        role = ("article" if tag == "article"
                else "skip" if tag in _HTML_SKIP_TAGS or classes & _HTML_SKIP_CLASSES
                else "block" if tag in _HTML_BLOCKS else "")
        self._stack.append((tag, role))
        if role:
            self._depth[role] += 1

    def handle_endtag(self, tag: str) -> None:
        if all(open_tag != tag for open_tag, _ in self._stack):
            return  # a stray end tag closes nothing
        while self._stack:
            open_tag, role = self._stack.pop()
            if role:
                self._depth[role] -= 1
                if role == "block" and self._depth["block"] == 0:
                    self._flush()
            if open_tag == tag:
                return

    def handle_data(self, data: str) -> None:
        if self._depth["article"] and self._depth["block"] and not self._depth["skip"]:
            self._text.append(data)

    def _flush(self) -> None:
        block = " ".join("".join(self._text).split())
        self._text = []
        if block:
            self.blocks.append(block)


def html_body_text(html: str) -> str:
    """The running text of an arXiv HTML (LaTeXML) page, one paragraph per line."""
    parser = _ArticleText()
    parser.feed(html)
    parser.close()
    if not parser.blocks:
        raise BodyError("no paragraphs inside <article> (not an arXiv HTML rendering?)")
    return "\n".join(parser.blocks)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


_JATS_SKIP = frozenset({"math", "tex-math", "disp-formula", "inline-formula", "table",
                        "alternatives", "object-id"})


def _jats_text(element: Element) -> str:
    parts: list[str] = [element.text or ""]
    for child in element:
        name = _local(child.tag)
        citation = name == "xref" and child.get("ref-type") == "bibr"
        if name not in _JATS_SKIP and not citation:
            parts.append(_jats_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _paragraphs(element: Element, out: list[str]) -> None:
    for child in element:
        if _local(child.tag) == "p":
            text = " ".join(_jats_text(child).split())
            if text:
                out.append(text)
        else:
            _paragraphs(child, out)


def jats_body_text(xml: str) -> str:
    """The paragraphs under ``<body>`` of a JATS article, one per line."""
    try:
        root = SafeET.fromstring(xml)
    except (ParseError, DefusedXmlException) as exc:
        raise BodyError(f"not usable JATS XML: {exc}") from None
    body = next((e for e in root.iter() if _local(e.tag) == "body"), None)
    if body is None:
        raise BodyError("JATS article has no <body> (metadata only?)")
    paragraphs: list[str] = []
    _paragraphs(body, paragraphs)
    if not paragraphs:
        raise BodyError("JATS <body> has no paragraphs")
    return "\n".join(paragraphs)
