"""Untrusted names, paths and input files (issue 20, items 1, 2, 6, 7, 12, 13; issue 24
item 8): ids and file names made safe, outputs kept under their roots, bad files named."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from needle_lib.benches.plan import SearchCase
from needle_lib.benches.queries import MAX_QUERY_CHARS, Query, file_sha256, load_queries
from needle_lib.benches.rows import query_id
from needle_lib.commands.status import completion_command
from needle_lib.dashboard import site
from needle_lib.llm.config import check_distinct_keys, resolve_model
from needle_lib.names import (
    MAX_FILE_NAME,
    UnsafePath,
    id_part,
    inside,
    query_label,
    safe_file_name,
    unique_query_labels,
)
from needle_lib.report.untrusted import escape_id_cell
from needle_lib.rundirs import OWNER_FILE, clean_stale_run_dirs, make_run_dir
from needle_lib.templates import macro
from needle_lib.tomlconf import ConfigError

XSS = '<img src=x onerror="document.body.dataset.pwned=1">'


# --- ids and names

def test_plain_id_parts_stay_as_they_are():
    for name in ("jquery", "qwen36-35b", "jQuery.fn.init", "$", "http_server"):
        assert id_part(name) == name


def test_hostile_id_parts_become_a_slug_plus_a_stable_hash():
    part = id_part(XSS)
    assert part == id_part(XSS)
    assert part.startswith("img-src-x-onerror") and "<" not in part and '"' not in part
    assert id_part("a/b") != id_part("a:b")


def test_search_case_ids_read_like_the_query_and_stay_unique():
    assert query_label("Best hiking boots?", "a428ca756e0f").startswith("best-hiking-boots-")
    rows = [("1", "best hiking boots"), ("2", "best hiking boots"), (f"id-{XSS}", XSS)]
    labels = unique_query_labels(rows)
    assert len(set(labels.values())) == 3
    case = SearchCase("news", Query("1", "best hiking boots"), "exa", labels["1"])
    assert case.id.startswith("news-best-hiking-boots-") and case.id.endswith("-exa")
    assert "<" not in labels[f"id-{XSS}"]
    readable = unique_query_labels([("q-ticker", "microsoft ticker"),
                                    ("a428ca756e0f", "best hiking boots")])
    assert readable["q-ticker"] == "q-ticker"  # a chosen id stays, so -k selects it
    assert readable["a428ca756e0f"].startswith("best-hiking-boots-")
    # a generated gold row's id (hash + UTC hour, ``benches.rows.query_id``) reads as its query
    generated = query_id("apple ceo", datetime(2026, 7, 2, 14, tzinfo=UTC))
    assert unique_query_labels([(generated, "Apple CEO")])[generated].startswith("apple-ceo-")


def test_labels_whose_short_hash_collides_get_a_longer_one():
    # the same text under two ids whose 4-hex hashes coincide (found by search, fixed here)
    key_a, key_b = _colliding_keys()
    labels = unique_query_labels([(key_a, "same words"), (key_b, "same words")])
    assert key_a.isdigit() and key_b.isdigit()
    assert labels[key_a] != labels[key_b]
    assert all(len(label.rsplit("-", 1)[1]) == 12 for label in labels.values())


def _colliding_keys() -> tuple[str, str]:
    seen: dict[str, str] = {}
    for n in range(100_000):
        key = str(n)
        short = query_label("x", key)
        if short in seen:
            return seen[short], key
        seen[short] = key
    raise AssertionError("no 4-hex collision in 100k keys")


def test_file_names_are_capped_by_hashing_the_tail():
    long_id = "org/" + "very-long-model-name-" * 14  # ~300 characters
    name = safe_file_name(long_id)
    assert len(name) <= MAX_FILE_NAME and "/" not in name
    assert safe_file_name(long_id + "x") != name


def test_a_path_outside_its_root_is_refused(tmp_path):
    assert inside(tmp_path, "news/index.html") == tmp_path / "news/index.html"
    with pytest.raises(UnsafePath, match="outside"):
        inside(tmp_path, "../escaped.html")
    with pytest.raises(UnsafePath):
        site.write_page(tmp_path / "site", "search/../../evil.html", "t", "")
    assert not (tmp_path / "evil.html").exists()


def test_a_model_named_by_a_path_with_dots_files_its_dump_under_a_safe_key(tmp_path):
    models = tmp_path / "configs" / "models"
    models.mkdir(parents=True)
    (tmp_path / "evil.toml").write_text('name = "evil"\n', encoding="utf-8")
    config = resolve_model("../../evil", models_dir=models)
    assert "/" not in config.key and not config.key.startswith(".")


def test_model_keys_that_collide_are_a_usage_error():
    with pytest.raises(ConfigError, match="both file their results as 'a_b'"):
        check_distinct_keys([resolve_model("a/b"), resolve_model("a:b")])
    check_distinct_keys([resolve_model("a/b"), resolve_model("a/b")])  # the same model: fine


def test_a_300_character_model_id_gets_a_file_name_that_fits():
    assert len(resolve_model("m" * 300).key) <= MAX_FILE_NAME


def test_resume_commands_are_quoted_for_the_shell():
    command = completion_command("jquery", "evil; rm -rf ~", "incomplete")
    assert "--model 'evil; rm -rf ~' --resume" in command


# --- HTML helpers

result_link = macro("report/macros.html.j2", "result_link")


@pytest.mark.parametrize("url", ["javascript:alert(1)", " JavaScript:alert(1)",
                                 "data:text/html,<script>alert(1)</script>", "vbscript:x",
                                 "//evil.example/x"])
def test_only_http_urls_become_links(url):
    html = result_link(url, "title")
    assert "<a " not in html and "href" not in html


def test_http_urls_are_links_with_escaped_attributes():
    html = result_link('https://ok.example/?a=1&b="2"', "t")
    assert html.startswith('<a href="https://ok.example/?a=1&amp;b=&#34;2&#34;"')


def test_the_test_id_cell_is_escaped_once():
    cells = ['<td class="col-result">Passed</td>', f'<td class="col-testId">t[{XSS}]</td>']
    escape_id_cell(cells)
    assert "<img" not in cells[1] and "&lt;img" in cells[1]
    again = list(cells)
    escape_id_cell(again)
    assert again == cells  # idempotent: no &amp;lt;


# --- query files

def test_a_jsonl_file_with_a_bom_is_read_as_jsonl(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"query_id": "a", "query": "boots"}\n')
    assert [(q.query_id, q.query) for q in load_queries(path)] == [("a", "boots")]


def test_a_utf16_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes("boots\n".encode("utf-16"))
    with pytest.raises(ConfigError, match=rf"{path}: UTF-16"):
        load_queries(path)


def test_binary_and_undecodable_lines_are_named(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"fine\n\x89PNG\x00\x00\n")
    with pytest.raises(ConfigError, match=rf"{path}:2: binary data"):
        load_queries(path)
    path.write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(ConfigError, match=rf"{path}:2: not UTF-8"):
        load_queries(path)


def test_an_overlong_query_is_named(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("ok\n" + "a" * (MAX_QUERY_CHARS + 1) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{path}:2: query is"):
        load_queries(path)


def test_deep_json_in_a_query_row_is_a_named_error(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "a", "query": "x", "gold": ' + "[" * 100_000 + "\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{path}:1: not a JSON object"):
        load_queries(path)


def test_the_query_file_hash_is_streamed_and_matches(tmp_path):
    import hashlib

    path = tmp_path / "q.txt"
    path.write_bytes(b"boots\n" * 1000)
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


# --- config numbers

@pytest.mark.parametrize("line", ["temperature = nan", "timeout = inf", "timeout = nan"])
def test_non_finite_numbers_are_refused_at_load(tmp_path, line):
    path = tmp_path / "m.toml"
    path.write_text(f'name = "m"\n{line}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a finite number"):
        resolve_model(str(path))


def test_a_non_finite_override_is_refused():
    with pytest.raises(ConfigError, match="finite"):
        resolve_model("m", {"temperature": float("nan")})


# --- stale run directories

def test_stale_run_directories_are_swept_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / "needle-run-stale"
    stale.mkdir()
    (stale / OWNER_FILE).write_text(dead.stdout.strip())
    live = tmp_path / "needle-run-live"
    live.mkdir()
    (live / OWNER_FILE).write_text(str(os.getpid()))
    young_orphan = tmp_path / "needle-run-young"
    young_orphan.mkdir()
    old_orphan = tmp_path / "needle-run-old"
    old_orphan.mkdir()
    os.utime(old_orphan, (0, 0))
    removed = clean_stale_run_dirs(tmp_path)
    assert sorted(p.name for p in removed) == ["needle-run-old", "needle-run-stale"]
    assert live.is_dir() and young_orphan.is_dir()
    fresh = make_run_dir(tmp_path)
    assert (fresh / OWNER_FILE).read_text() == str(os.getpid())


def test_a_tampered_history_bench_name_is_refused(tmp_path):
    from search_runs import START, header, judged_case, write_report

    from needle_lib.continuous.runs import ReportError, load_run

    head = header("news", "judged", ["exa"], 1, START)
    path = write_report(tmp_path, head, [judged_case("q", "boots", "exa", [2])], START)
    text = path.read_text(encoding="utf-8").replace('"bench": "news"', '"bench": ".."')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError, match="not a plain name"):
        load_run(Path(path))


def test_status_finds_the_dump_of_a_model_config_with_an_unsafe_file_name(tmp_path, monkeypatch,
                                                                          capsys):
    """A run files ``configs/models/My Model.toml`` under the safe key ``My_Model``; status
    used to look for ``…__My Model.json`` and call every such run missing."""
    from needle_lib.cli import main as needle
    from needle_lib.commands import status

    models = tmp_path / "models"
    models.mkdir()
    (models / "My Model.toml").write_text('name = "my-model"\n', encoding="utf-8")
    monkeypatch.setattr(status, "MODELS_DIR", models)
    key = resolve_model("My Model", models_dir=models).key
    results = tmp_path / "results"
    assert key == "My_Model"
    view = results / f"jquery__{key}.json"  # where a run's latest view goes
    results.mkdir()
    view.write_text('{"prompt_version": "v0"}', encoding="utf-8")  # found: stale, not missing
    assert needle(["status", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith(f"jquery__{key} ") and "stale" in line
               for line in out.splitlines()), out
