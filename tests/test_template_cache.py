"""Compiled templates are kept between runs (``needle_lib.templates``): a later process
renders from the cache without parsing, and a cache that cannot be written costs nothing
but the compile."""

from __future__ import annotations

import shutil

import pytest
from jinja2 import Environment

from needle_lib import templates


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A process's first environment, with the cache under ``tmp_path``."""
    monkeypatch.setattr(templates, "CACHE_DIR", tmp_path)
    templates.environment.cache_clear()
    yield tmp_path / "templates"
    templates.environment.cache_clear()


def link() -> str:
    made = templates.macro("report/macros.html.j2", "result_link")("https://a.example/x", "x")
    return str(made)


def test_a_later_process_renders_from_the_compiled_cache(cache, monkeypatch):
    first = link()
    assert 'href="https://a.example/x"' in first
    assert list(cache.iterdir())  # the compiled template, kept
    templates.environment.cache_clear()  # a new process: nothing compiled in memory

    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again: the compiled cache was not used")

    monkeypatch.setattr(Environment, "_parse", no_parsing)
    assert link() == first


def test_a_cache_that_cannot_be_made_or_written_costs_only_the_compile(cache):
    cache.write_text("a file where the cache directory would go")
    made = link()  # the directory cannot be made: compiled in this process only
    assert 'href="https://a.example/x"' in made
    templates.environment.cache_clear()
    cache.unlink()
    templates.environment()  # the directory is made ...
    shutil.rmtree(cache)  # ... and gone by the time a compiled template is written
    assert link() == made
