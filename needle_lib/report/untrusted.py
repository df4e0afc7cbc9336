"""Text Needle did not write, on its way into HTML: which URLs may be links, and the two
places pytest-html inserts text with ``innerHTML`` unescaped.

Escaping stops markup, not a live ``javascript:`` or ``data:`` URL in an ``href`` that runs
on click; so only ``http(s)`` URLs become links (the templates' ``web_url`` test), anything
else is shown as text. pytest-html inserts each row's test id and each environment value
with ``innerHTML``: ``escape_id_cell`` is called from the plugin's row hook and
``environment_value`` builds every value Needle adds, so no code path puts raw text there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import unescape

from markupsafe import Markup, escape

_WEB_URL = re.compile(r"^https?://[^\s]+$", re.I)
_ID_CELL = re.compile(r'^(<td class="col-testId">)(.*)(</td>)$', re.S)


def is_web_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL (the only kind Needle links to)."""
    return bool(_WEB_URL.match(url.strip()))


def escape_id_cell(cells: list[str]) -> None:
    """Escape the test-id cell of a pytest-html row in place (idempotent: text that was
    already escaped is unescaped first, so ``&amp;`` never doubles)."""
    for index, cell in enumerate(cells):
        match = _ID_CELL.match(cell)
        if match:
            cells[index] = f"{match[1]}{escape(unescape(match[2]))}{match[3]}"


def environment_value(lines: Sequence[str]) -> str:
    """A pytest-html environment value: each line escaped, one per line."""
    return str(Markup("<br>").join(lines))
