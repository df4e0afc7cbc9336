"""One verdict whichever command computes it; a policy skip is answered; a failed preflight
belongs to its pair; resume tolerates bookkeeping (issue 25, items 3, 4, 5, 9)."""

from __future__ import annotations

import json

from evalrun import assert_usage_error, load_dump, run_evals

from needle_lib.cli import main as needle
from needle_lib.testing.openai_server import FakeOpenAIServer

#: ``documented``'s first 20 body lines are its docstring: under --no-comments its window has
#: nothing to score. ``plain`` is all code.
SOURCE = "\n".join([
    "def documented(items):",
    '    """Sum the items.',
    *(f"    Line {n} of the docstring." for n in range(2, 22)),
    '    """',
    *(f"    total_{n} = sum(items) + {n}" for n in range(30)),
    "    return total_0",
    "",
    "",
    "def plain(items):",
    *(f"    value_{n} = len(items) * {n}" for n in range(30)),
    "    return value_0",
    "",
])


def _file_run(pytester, tmp_path, *args):
    source = tmp_path / "lib.py"
    source.write_text(SOURCE, encoding="utf-8")
    results = tmp_path / "results"
    result = run_evals(pytester, results, "--file", str(source), *args)
    dumps = list(results.glob("*.json"))
    assert len(dumps) == 1, result.stdout.str()
    return result, dumps[0]


def test_a_policy_skip_is_answered_and_passes_the_gates(pytester, tmp_path):
    result, dump_path = _file_run(pytester, tmp_path, "--no-comments", "--min-score", "0.5")
    dump = json.loads(dump_path.read_text())
    outcomes = {c["function"]: c["outcome"] for c in dump["cases"]}
    assert outcomes == {"documented": "skipped", "plain": "passed"}
    assert (dump["complete"], dump["valid"]) == (True, True)
    assert dump["summary"]["unscored"] == 1
    assert result.ret == 0, result.stdout.str()


def test_rescore_gives_the_live_verdict_and_rescores_policy_skips(pytester, tmp_path, capsys):
    _, dump_path = _file_run(pytester, tmp_path)  # default policy: the docstring is scored
    capsys.readouterr()
    assert needle(["rescore", str(dump_path), "--no-comments", "--json"]) == 0
    strict = json.loads(capsys.readouterr().out)
    documented = next(c for c in strict["cases"] if c["function"] == "documented")
    assert documented["outcome"] == "skipped" and documented["scored"] == 0
    assert strict["complete"] is True

    skipped = tmp_path / "skipped.json"
    skipped.write_text(json.dumps(strict), encoding="utf-8")
    assert needle(["rescore", str(skipped), "--count-comments", "--json"]) == 0
    again = next(c for c in json.loads(capsys.readouterr().out)["cases"]
                 if c["function"] == "documented")
    assert again["outcome"] == "passed" and again["scored"] > 0 and not again["skip_reason"]


def test_a_failed_preflight_skips_its_pair_only(pytester, tmp_path):
    # 20K tokens of context: jquery's prompt (~86K) overflows, novel_16k's fits.
    with FakeOpenAIServer("perfect", context=20_000) as server:
        result = run_evals(pytester, tmp_path, "--corpus", "jquery", "--corpus", "novel_16k",
                           "--sample", "3", "--model", "small", "--base-url", server.url)
    jquery, novel = load_dump(tmp_path, "jquery__small"), load_dump(tmp_path, "novel_16k__small")
    assert [c["outcome"] for c in jquery["cases"]].count("error") == 1
    assert [c["outcome"] for c in jquery["cases"]].count("skipped") == 2
    assert all("preflight of jquery__small failed" in c["skip_reason"]
               for c in jquery["cases"] if c["outcome"] == "skipped")
    assert [c["outcome"] for c in novel["cases"]] == ["passed"] * 3
    result.assert_outcomes(passed=3, errors=1, skipped=2)


def test_resume_tolerates_bookkeeping_and_names_leaf_keys(pytester, tmp_path):
    select = ("--corpus", "http_server", "--sample", "2", "--model", "m")
    with FakeOpenAIServer("perfect") as first, FakeOpenAIServer("perfect") as second:
        run_evals(pytester, tmp_path, *select, "--base-url", first.url).assert_outcomes(passed=2)
        resumed = run_evals(pytester, tmp_path, *select, "--base-url", second.url,
                            "--request-timeout", "17", "--resume")
        resumed.assert_outcomes(passed=2)
        assert second.stats.requests == 0  # every answer came from the dump
        refused = run_evals(pytester, tmp_path, *select, "--base-url", second.url,
                            "--relax-indent", "--resume")
    assert_usage_error(refused, "--resume*different setup*",
                       "  scoring.relax_indent: False (earlier run) vs True (this run)")
