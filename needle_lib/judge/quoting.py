"""Untrusted text quoted into a judge prompt so that it stays data.

Every judge prompt (relevance, query profile, the known-item answer backstop) carries text
that came from a query file, a public feed or a search engine. Pasted in raw, such text can
close the block it sits in (``</result>``), start a line of its own that reads like the
prompt's (``Expected answer: …``), or address the judge. As one line of JSON with ``<``,
``>`` and ``&`` escaped (as JSON embedded in HTML is), it can do none of that.
"""

from __future__ import annotations

import json
from typing import Any


def data_json(value: Any) -> str:
    """``value`` as one line of JSON in which no markup can appear: ``<``, ``>`` and ``&``
    are escaped, newlines are ``\\n``."""
    return (json.dumps(value, ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
