"""Needle's HTML, rendered from the Jinja2 templates in this package with autoescaping on.

Every ``{{ value }}`` is escaped unless it is already markup (a rendered fragment), so no
code path can forget to escape a model's answer, a snippet or a URL. What escaping cannot
stop is a ``javascript:`` or ``data:`` URL in an ``href``: the ``web_url`` test (only
absolute http(s) URLs) guards every link to a URL Needle did not write
(``report/macros.html.j2``'s ``result_link``).
"""

from __future__ import annotations

import contextlib
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup

from needle_lib.paths import CACHE_DIR
from needle_lib.report.untrusted import is_web_url

#: What a missing figure shows, as the terminal prints it.
DASH = "—"


def dash(value: object) -> object:
    """``None`` (a figure that does not exist) as ``—``, the terminal's mark for it."""
    return DASH if value is None else value


class _CompiledTemplates(FileSystemBytecodeCache):
    """Compiled templates kept between runs (``<cache>/templates``): parsing and compiling
    the report's templates was a tenth of a short recall run. Jinja2 keys each entry on the
    template's source and its own version, and replaces a file atomically, so a changed
    template or a concurrent run is never served stale code; a cache that cannot be
    written costs a compile, never a run."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_templates() -> _CompiledTemplates | None:
    directory = CACHE_DIR / "templates"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only cache: templates are compiled per process
    return _CompiledTemplates(str(directory))


@cache
def environment() -> Environment:
    """One environment per process: templates are compiled once and cached by Jinja2 (and,
    compiled, between runs)."""
    env = Environment(
        loader=PackageLoader("needle_lib", "templates"),
        bytecode_cache=_compiled_templates(),
        autoescape=True,  # every template, whatever its name ends with
        undefined=StrictUndefined,  # a misspelt field is an error, not an empty cell
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["dash"] = dash
    env.tests["web_url"] = is_web_url
    return env


def render(template: str, /, **context: Any) -> Markup:
    """Render ``template`` (a path under ``needle_lib/templates``) with ``context``."""
    return Markup(environment().get_template(template).render(**context))


def macro(template: str, name: str) -> Any:
    """A macro of ``template`` as a callable returning markup (for a fragment code builds)."""
    return getattr(environment().get_template(template).module, name)
