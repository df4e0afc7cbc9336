"""``RunSettings``: every option of ``pytest evals`` typed in one record, built once at
configure; nothing in ``needle_lib`` asks pytest for an option by name any more."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import msgspec
import pytest
from settings_args import parsed

import needle_lib
from needle_lib.argtypes import Shard
from needle_lib.options import RunSettings


def test_every_option_has_a_field_and_every_field_an_option() -> None:
    dests = set(vars(parsed()))
    own = {field.name for field in fields(RunSettings)} - {"keyword", "collectonly", "color"}
    assert dests - own == set()  # an option nothing could read
    assert own - dests == set()  # a field no option fills


def test_a_parsed_command_line_becomes_typed_immutable_settings() -> None:
    namespace = parsed("--model", "a", "--model", "b", "--shard", "2/3", "--sample", "4",
                        "--queries", "q.jsonl", "--strict-indent")
    namespace.keyword = "jquery"
    run = RunSettings.from_namespace(namespace)
    assert run.model == ("a", "b") and run.corpus == ()
    assert run.shard == Shard(2, 3) and run.sample == 4 and run.relax_indent is False
    assert run.keyword == "jquery" and run.collectonly is False and run.color == "auto"
    assert run.has_query_set and run.searching and not run.writes_parts
    with pytest.raises(AttributeError):
        run.sample = 5  # type: ignore[misc]


def test_a_value_of_the_wrong_type_is_refused_naming_the_option() -> None:
    namespace = parsed()
    namespace.sample = "3"  # an option declared without its type
    with pytest.raises(msgspec.ValidationError, match=r"\$\.sample"):
        RunSettings.from_namespace(namespace)


def test_no_module_asks_pytest_for_an_option_by_name() -> None:
    """Everything reads ``RunSettings``; pytest's own options that Needle sets for
    pytest-html and xdist (``htmlpath``, ``dist``) are written, not looked up by name."""
    root = Path(needle_lib.__file__).parent
    asking = re.compile(r"\.getoption\(|\bopt\(\"")
    found = [f"{path.relative_to(root)}:{number}"
             for path in sorted(root.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if asking.search(line)]
    assert found == []
