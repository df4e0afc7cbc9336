"""HTML for text Needle did not write: result links and pytest-html's test-id cell.

Escaping stops markup, not a live ``javascript:`` or ``data:`` URL in an ``href`` that runs
on click; so only ``http(s)`` URLs become links, anything else is shown as text. And
pytest-html inserts each row's test id with ``innerHTML`` unescaped: ``escape_id_cell`` is
called from the plugin's row hook so no code path can put raw text there.
"""

from __future__ import annotations

import re
from html import escape, unescape

_WEB_URL = re.compile(r"^https?://[^\s]+$", re.I)
_ID_CELL = re.compile(r'^(<td class="col-testId">)(.*)(</td>)$', re.S)


def is_web_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL (the only kind Needle links to)."""
    return bool(_WEB_URL.match(url.strip()))


def result_link(url: str, text: str) -> str:
    """``<a href>`` for an http(s) ``url``; any other scheme is shown, escaped, as text."""
    label = escape(text or url)
    if not is_web_url(url):
        return f'<span class="needle-unlinked" title="not an http(s) URL">{label}</span>'
    return f'<a href="{escape(url.strip())}" rel="noopener noreferrer">{label}</a>'


def escape_id_cell(cells: list[str]) -> None:
    """Escape the test-id cell of a pytest-html row in place (idempotent: text that was
    already escaped is unescaped first, so ``&amp;`` never doubles)."""
    for index, cell in enumerate(cells):
        match = _ID_CELL.match(cell)
        if match:
            cells[index] = f"{match[1]}{escape(unescape(match[2]))}{match[3]}"
