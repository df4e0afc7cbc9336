"""Bad input stops the run before it starts: one ``ERROR:`` line naming file and key, exit 4.

(Bad model configs, unknown corpora, --dump with several pairs and --resume refusals are
checked in test_plugin_recall / test_plugin_lifecycle; queries and engines in
test_search_evals.)
"""

from __future__ import annotations

import pytest
from evalrun import assert_usage_error, run_evals

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
                          (("--shard", "3/2"), "*--shard: expected I/N with 1 <= I <= N*")):
        result = run_evals(pytester, tmp_path, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([message])
        assert "Traceback" not in result.stdout.str() + result.stderr.str()
