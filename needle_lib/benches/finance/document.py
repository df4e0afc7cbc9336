"""Filing documents as text: what a reader of the page sees, for the LLM and the span check.

EDGAR primary documents are HTML (inline XBRL for 10-K/10-Q). Visible text only: scripts,
styles, SVG, ``<noscript>``, the ``<head>`` and the inline-XBRL header (hidden facts and
contexts inside ``<ix:header>``) are skipped, block elements separate words, inline ones
(``<b>``, ``<span>``) do not, and whitespace runs collapse to one space. The standard
library's ``html.parser`` is lenient enough for EDGAR's hand-made HTML.
"""

from __future__ import annotations

from html.parser import HTMLParser

SKIPPED = frozenset({"script", "style", "svg", "noscript", "head", "title", "ix:header"})
BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "footer",
    "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol",
    "p", "pre", "section", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self._hidden += 1
        elif tag in BLOCKS:
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:  # <br/>, <hr/>; a self-closed skipped tag hides nothing
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._hidden = max(0, self._hidden - 1)
        elif tag in BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML (or plain-text) document, whitespace collapsed."""
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())
