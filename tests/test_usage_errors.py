"""Bad input stops the run before it starts: one ``ERROR:`` line naming file and key, exit 4.

(Bad model configs, unknown corpora, --dump with several pairs and --resume refusals are
checked in test_plugin_recall / test_plugin_lifecycle; queries and engines in
test_search_evals.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evalrun import assert_usage_error, run_evals

from needle_lib.options import mistyped_options
from needle_lib.paths import CACHE_DIR, REPO_ROOT

CORPUS = """\
[files]
directory = "fixtures"
glob = "http_server.py"

[sample]
k = 4
seed = 1
{sample_line}
"""


@pytest.mark.parametrize(("sample_line", "message"), [
    ("primay_lines = 20", "[[]sample[]] unknown key 'primay_lines'*"),
    ("primary_lines = '20'", "[[]sample[]] key 'primary_lines' must be int, got str '20'"),
])
def test_a_broken_corpus_config_names_file_and_key(pytester, tmp_path, sample_line, message):
    config = tmp_path / "broken.toml"
    config.write_text(CORPUS.format(sample_line=sample_line))
    result = run_evals(pytester, tmp_path, "--corpus", str(config))
    assert_usage_error(result, f"{config}: {message}")


def test_bad_concurrency_and_shard_values_are_usage_errors(pytester, tmp_path):
    for args, message in ((("--concurrency", "0"), "*--concurrency: must be at least 1, got 0*"),
                          (("--shard", "3/2"), "*--shard: expected I/N with 1 <= I <= N*"),
                          # issue 32 item 8: passed validation, then every case overflowed
                          (("--request-timeout", "1e10"),
                           "*key 'timeout' must be at most 86400 seconds*")):
        result = run_evals(pytester, tmp_path, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([message])
        assert "Traceback" not in result.stdout.str() + result.stderr.str()


def scratch_root(root: Path) -> Path:
    """A repository layout under ``root`` (``NEEDLE_ROOT``) whose configs can be broken."""
    (root / "configs" / "engines").mkdir(parents=True)
    for name in ("evals", "fixtures", "conftest.py", "pyproject.toml"):
        (root / name).symlink_to(REPO_ROOT / name)
    for name in ("corpora", "models"):
        (root / "configs" / name).symlink_to(REPO_ROOT / "configs" / name)
    return root


def test_a_broken_engine_config_under_the_evals_directory_is_one_usage_error(
        pytester, tmp_path, monkeypatch):
    """A search run reads every engine config up front: a broken one used to surface as
    collection errors and, with an HTML report, an INTERNALERROR. A recall run reads none
    (the search benches are not collected without a query set), so it is not blocked."""
    root = scratch_root(tmp_path / "repo")
    broken = root / "configs" / "engines" / "mine.toml"
    broken.write_text('method = "GET"\npath = "/search"\nbogus = 1\n', encoding="utf-8")
    queries = tmp_path / "q.txt"
    queries.write_text("best hiking boots\n", encoding="utf-8")
    monkeypatch.setenv("NEEDLE_ROOT", str(root))
    monkeypatch.setenv("NEEDLE_CACHE_DIR", str(CACHE_DIR))  # the corpora's parses, kept warm
    searching = run_evals(pytester, tmp_path / "results", "--html", str(tmp_path / "r.html"),
                          "--queries", str(queries), module="")
    assert_usage_error(searching, f"{broken}: unknown key 'bogus'*")
    assert "INTERNALERROR" not in searching.stdout.str() + searching.stderr.str()
    recalling = run_evals(pytester, tmp_path / "results", "--html", str(tmp_path / "r2.html"),
                          "--corpus", "http_server", "--collect-only", module="")
    assert recalling.ret == pytest.ExitCode.OK, recalling.stdout.str()
    assert "INTERNALERROR" not in recalling.stdout.str() + recalling.stderr.str()


def test_a_collection_error_with_an_html_report_is_reported_not_an_internal_error(pytester):
    """pytest-html hands a collection error's CollectReport (no ``user_properties``) to the
    row hooks the controller implements."""
    pytester.makepyfile(test_broken="raise RuntimeError('broken module')\n")
    result = pytester.runpytest_subprocess("-p", "needle_lib.plugin", "-p", "no:cacheprovider",
                                           "--html", "r.html", "test_broken.py")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest's own "errors during collection"
    result.stdout.fnmatch_lines(["*ERROR collecting test_broken.py*", "*broken module*"])
    assert "test_broken.py" in (pytester.path / "r.html").read_text(encoding="utf-8")


def test_a_mistyped_option_gets_the_nearest_needle_option(pytester, tmp_path):
    """Issue 34 item 9: pytest alone says only "unrecognized arguments: --corpora"."""
    result = run_evals(pytester, tmp_path, "--corpora", "jquery", "--max-prompt=6000")
    assert_usage_error(result, "usage: *")
    result.stderr.fnmatch_lines([
        "*unrecognized arguments: --corpora jquery --max-prompt=6000",
        "  needle: --corpora is not an option: did you mean --corpus? --max-prompt is not an "
        "option: did you mean --max-prompt-tokens?",
    ])


def test_a_hint_is_only_for_names_no_one_registered() -> None:
    known = {"--durations", "--corpus"}
    hints = mistyped_options(["evals", "--corpora", "x", "--durations=3", "--model", "m",
                              "-k", "jquery", "--zzz"], lambda name: name not in known)
    assert hints == ["--corpora is not an option: did you mean --corpus?"]
